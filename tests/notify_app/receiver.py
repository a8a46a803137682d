"""A local receiving server for webhook tests: an http.server thread that records each request and answers
the statuses it is told to, in order (then 200); a 3xx points to another path of the same server."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    answers: list[int] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)


@contextmanager
def receiving_server(answers: list[int] | None = None) -> Iterator[Receiver]:
    receiver = Receiver(url="", answers=list(answers or []))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                receiver.requests.append(Received(self.path, dict(self.headers.items()), body))
                status = receiver.answers.pop(0) if receiver.answers else 200
            self.send_response(status)
            if 300 <= status < 400:  # a redirect elsewhere on this server: the sender must not follow it
                self.send_header("Location", "/moved")
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok" if status < 300 else b"receiver is down")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
