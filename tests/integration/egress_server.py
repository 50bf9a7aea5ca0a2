#!/usr/bin/env python3
"""The network a --net-allow test's tool tries to reach, run inside the test's own network
namespace (egress_world.cpp): HTTP servers on TEST-NET addresses, on the namespace's loopback
and on the cloud metadata address, and a UDP echo server in place of DNS. Every server answers,
so that a refusal is the proxy's doing, never a server that was not there. Prints "ready" once
everything listens; ends when its stdin closes."""
import http.server
import socket
import sys
import threading

HTTP = [("192.0.2.1", 8080), ("192.0.2.1", 8081), ("192.0.2.1", 8443), ("192.0.2.2", 8080),
        ("127.0.0.1", 8080), ("169.254.169.254", 80), ("10.11.12.13", 8080)]
UDP = [("192.0.2.1", 53)]
SILENT = [("192.0.2.1", 9100)]  # reads everything, never answers, never closes
CHUNK = b"x" * (1 << 16)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        host, port = self.server.server_address[:2]
        if self.path.startswith("/bytes/"):
            # A download of N bytes, for the throughput benchmark and byte counts.
            left = int(self.path[len("/bytes/"):])
            self.send_response(200)
            self.send_header("Content-Length", str(left))
            self.end_headers()
            while left > 0:
                piece = CHUNK[:min(left, len(CHUNK))]
                self.wfile.write(piece)
                left -= len(piece)
            return
        body = (f"served by {host}:{port} path {self.path} "
                f"host {self.headers.get('Host')} "
                f"connection {self.headers.get('Connection')} "
                f"proxy-authorization {self.headers.get('Proxy-Authorization')}\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve_udp(address):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(address)

    def echo():
        while True:
            data, peer = sock.recvfrom(2048)
            sock.sendto(b"echo " + data, peer)

    threading.Thread(target=echo, daemon=True).start()


def serve_silently(address):
    listener = socket.create_server(address)

    def drain(connection):
        while connection.recv(1 << 16):
            pass

    def accept():
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=drain, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def main():
    for address in HTTP:
        server = http.server.ThreadingHTTPServer(address, Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    for address in UDP:
        serve_udp(address)
    for address in SILENT:
        serve_silently(address)
    print("ready", flush=True)
    sys.stdin.read()


main()
