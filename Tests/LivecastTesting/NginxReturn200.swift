import Foundation
import LocalPostgres

#if canImport(Glibc)
import Glibc
#endif

/// nginx (Debian's package) serving `return 200;` over TLS + HTTP/2 from a temporary prefix: a sink that answers
/// every push at once, as APNs does a valid one.
package struct NginxReturn200: Sendable {
    /// Its TLS port on 127.0.0.1.
    package let port: Int
    /// Its self-signed certificate (PEM), for `localhost`.
    package let certificate: String

    /// Runs `body` while nginx runs; stops it after.
    package static func with(_ body: (NginxReturn200) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        let certificate = directory.path("cert.pem")
        let key = directory.path("key.pem")
        let made = try await ExternalProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
                "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
            ]
        )
        guard made.status == 0 else { throw TestFailure("openssl: \(made.stderr)") }
        // A port found free can be taken before nginx binds it (as a client's own port, say): try a few.
        for _ in 0..<3 {
            let port = try FreePort.next()
            try Self.configuration(port: port, certificate: certificate, key: key, directory: directory)
                .write(toFile: directory.path("nginx.conf"), atomically: false, encoding: .utf8)
            let nginx = try await BackgroundProcess("nginx", ["-p", directory.url.path, "-c", directory.path("nginx.conf")])
            defer { nginx.signal(SIGKILL) }  // it may inherit a mask that blocks SIGTERM from the test process
            let curl = Curl(caFile: certificate)
            var ready = false
            for _ in 0..<100 where !ready {
                ready = try await curl.send(.init("GET", "https://localhost:\(port)/")).status == 200
                if !ready { try await Task.sleep(for: .milliseconds(50)) }
            }
            if ready {
                try await body(NginxReturn200(port: port, certificate: certificate))
                return
            }
            guard nginx.stderr.contains("Address already in use") else { throw TestFailure("nginx did not start: \(nginx.stderr)") }
        }
        throw TestFailure("nginx did not start: each port it was given was taken before it could bind it")
    }

    /// nginx's configuration: `return 200;` on 127.0.0.1:`port`, over TLS with HTTP/2, everything it writes in
    /// `directory`.
    private static func configuration(port: Int, certificate: String, key: String, directory: TemporaryDirectory) -> String {
        """
        daemon off;
        master_process off;
        worker_processes 1;
        error_log \(directory.path("error.log"));
        pid \(directory.path("nginx.pid"));
        events { worker_connections 256; }
        http {
            access_log off;
            client_body_temp_path \(directory.path("body"));
            proxy_temp_path \(directory.path("proxy"));
            fastcgi_temp_path \(directory.path("fastcgi"));
            uwsgi_temp_path \(directory.path("uwsgi"));
            scgi_temp_path \(directory.path("scgi"));
            server {
                listen 127.0.0.1:\(port) ssl http2;
                ssl_certificate \(certificate);
                ssl_certificate_key \(key);
                location / { return 200; }
            }
        }
        """
    }
}
