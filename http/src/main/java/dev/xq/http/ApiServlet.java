package dev.xq.http;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Map;

/** The servlet the whiteboard serves: turns each request into an {@link ApiRequest} for {@link Api}. */
final class ApiServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    private final transient Api api;

    ApiServlet(Api api) {
        this.api = api;
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        // The raw path: decoding is the API's business (a %2F must not split a segment).
        String uri = req.getRequestURI();
        String context = req.getContextPath();
        String path = context != null && !context.isEmpty() && uri.startsWith(context) ? uri.substring(context.length()) : uri;
        ApiRequest r = new ApiRequest(req.getMethod(), path.isEmpty() ? "/" : path, req.getQueryString(),
                req.getHeader("Authorization"), loopback(req.getRemoteAddr()), req.getContentLengthLong(), req::getInputStream,
                req.getHeader("Origin"), req.getHeader("Host"), connection(req));
        ApiResponse answer = api.handle(r);
        resp.setStatus(answer.status());
        resp.setContentType(answer.contentType().contains("charset") ? answer.contentType() : answer.contentType() + ";charset=utf-8");
        resp.setHeader("Cache-Control", "no-store");
        resp.setHeader("X-Content-Type-Options", "nosniff");
        for (Map.Entry<String, String> h : answer.headers().entrySet()) {
            resp.setHeader(h.getKey(), h.getValue());
        }
        byte[] bytes = answer.bytes();
        resp.setContentLength(bytes.length);
        resp.getOutputStream().write(bytes);
    }

    static boolean loopback(String address) {
        InetAddress a = literal(address);
        return a != null && a.isLoopbackAddress();
    }

    /** @return the connection's two ends as the container gives them (no lookup happens), or null if it gives them not */
    static LoopbackPeers.Connection connection(HttpServletRequest req) {
        InetAddress peer = literal(req.getRemoteAddr());
        InetAddress local = literal(req.getLocalAddr());
        int peerPort = req.getRemotePort();
        int localPort = req.getLocalPort();
        if (peer == null || local == null || peerPort <= 0 || peerPort > 65535 || localPort <= 0 || localPort > 65535) {
            return null;
        }
        return new LoopbackPeers.Connection(peer, peerPort, local, localPort);
    }

    /** @return a literal address from the connection ({@code [::1]} bracketed or not), never looked up; null if it is none */
    static InetAddress literal(String address) {
        if (address == null) {
            return null;
        }
        try {
            return InetAddress.ofLiteral(address.startsWith("[") && address.endsWith("]") ? address.substring(1, address.length() - 1) : address);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
