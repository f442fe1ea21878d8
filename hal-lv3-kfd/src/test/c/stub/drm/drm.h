/* Fallback for machines without libdrm-dev's <drm/drm.h>: kfd_ioctl.h needs only the fixed-width
 * types and ioctl macros from it. Passed with -idirafter, so a real drm.h wins. */
#include <linux/types.h>
#include <linux/ioctl.h>
