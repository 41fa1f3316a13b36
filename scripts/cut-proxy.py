# A TCP proxy for measurements: listens on port ARGV1, forwards to port ARGV2 on 127.0.0.1, and cuts each connection
# after ARGV3 request bytes (`python3 scripts/cut-proxy.py 18782 18781 62914560` breaks uploads every 60 MB).
import socket, sys, threading
listen, upstream, limit = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def pipe(a, b, budget):
    sent = 0
    try:
        while True:
            data = a.recv(65536)
            if not data: break
            if budget is not None and sent + len(data) > budget:
                b.sendall(data[: budget - sent]); break
            b.sendall(data); sent += len(data)
    except OSError: pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR); s.close()
        except OSError: pass
server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", listen)); server.listen(64)
while True:
    c, _ = server.accept()
    u = socket.create_connection(("127.0.0.1", upstream))
    threading.Thread(target=pipe, args=(c, u, limit), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c, None), daemon=True).start()
