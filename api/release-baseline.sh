#!/usr/bin/env bash
# Releases the API bundle as the new baseline (docs/api-versioning.md):
#   1. builds module api at its version without -SNAPSHOT (X), tests and baseline check included,
#   2. puts dev.xq.api-X.jar (with a pom and checksums) into api/baseline-repo, the Maven
#      repository the build baselines against,
#   3. moves api/pom.xml and the root pom's xq.api.version to the next micro snapshot.
# Then commit api/baseline-repo, api/pom.xml and pom.xml. Extra arguments go to Maven
# (e.g. -o -Dmaven.repo.local=...).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
cur="$(sed -n 's|^  <version>\(.*\)</version>$|\1|p' api/pom.xml)"
case "$cur" in
  *-SNAPSHOT) ;;
  *) echo "release-baseline: api/pom.xml's version '$cur' is no snapshot" >&2; exit 1 ;;
esac
v="${cur%-SNAPSHOT}"
IFS=. read -r major minor micro <<<"$v"
next="$major.$minor.$((micro + 1))-SNAPSHOT"
[ ! -e "api/baseline-repo/dev/xq/dev.xq.api/$v" ] || { echo "release-baseline: $v is already released" >&2; exit 1; }
restore() { sed -i "s|^  <version>$v</version>$|  <version>$cur</version>|" api/pom.xml; }
trap restore ERR
sed -i "s|^  <version>$cur</version>$|  <version>$v</version>|" api/pom.xml
mvn -B -q -pl api clean package "$@"
# deploy-file refuses to run offline, even to a file: URL; it needs no network here
online=(); for a in "$@"; do case "$a" in -o|--offline) ;; *) online+=("$a") ;; esac; done
mvn -B -q -N deploy:deploy-file "${online[@]}" -Dfile="api/target/dev.xq.api-$v.jar" -DgroupId=dev.xq -DartifactId=dev.xq.api \
  -Dversion="$v" -Dpackaging=jar -DgeneratePom=true -DrepositoryId=xq-api-baseline -Durl="file://$ROOT/api/baseline-repo"
trap - ERR
sed -i "s|^  <version>$v</version>$|  <version>$next</version>|" api/pom.xml
sed -i "s|<xq.api.version>$cur</xq.api.version>|<xq.api.version>$next</xq.api.version>|" pom.xml
grep -q "<xq.api.version>$next</xq.api.version>" pom.xml || { echo "release-baseline: set xq.api.version in pom.xml to $next by hand" >&2; exit 1; }
echo "released dev.xq.api $v into api/baseline-repo; api is now $next. Commit api/baseline-repo api/pom.xml pom.xml."
