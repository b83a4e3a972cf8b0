#!/usr/bin/python3
"""A gRPC server for test_grpc.sh on Debian's python3-grpcio, with the
messages of a descriptor set (protoc --descriptor_set_out, argv[1]): no
generated code, a generic handler. Echo.Say answers with what it got,
plus the call's metadata; fail_with answers with that status and a
message; delay_ms waits first. Echo.Count streams b replies (then fails
with fail_with if set), Echo.Sum joins a client stream's texts,
Echo.Chat echoes each message of a bidirectional stream, with the
client's address and port (which connection it came on). With
--reflection v1|v1alpha it serves gRPC server reflection from the
descriptor set (reflection.proto must be in it; metadata x-reflect-token,
if sent, must be "ok"); with --health,
grpc.health.v1's Check (health.proto); with --gzip, responses gzip'd. Initial metadata x-initial: hi, trailing
x-trailer: yes. Listens on 127.0.0.1, port 0, plaintext or, with
--tls CERT KEY [--client-ca CA], TLS (and mTLS); prints its port on
stdout's first line and runs until stdin closes or SIGTERM."""
import sys
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def message_classes(path):
    fds = descriptor_pb2.FileDescriptorSet()
    with open(path, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    factory = message_factory.MessageFactory(pool)

    def cls(name):
        return factory.GetPrototype(pool.FindMessageTypeByName(name))

    return fds, cls


def reflection_handler(fds, cls, service_name):
    """grpc.reflection's ServerReflectionInfo from the descriptor set: the
    services of echo.proto (and reflection's own), and for a symbol the
    file that defines it with the files it imports."""
    req_cls = cls("grpc.reflection.v1.ServerReflectionRequest")
    rep_cls = cls("grpc.reflection.v1.ServerReflectionResponse")
    by_name = {f.name: f for f in fds.file}
    services = [f.package + "." + s.name for f in fds.file for s in f.service]

    def with_imports(f, out):
        if f.name in [g.name for g in out]:
            return out
        for d in f.dependency:
            with_imports(by_name[d], out)
        out.append(f)
        return out

    def info(reqs, ctx):
        # connect's reflect_metadata arrives: a token other than "ok" is refused
        token = dict(ctx.invocation_metadata()).get("x-reflect-token")
        if token is not None and token != "ok":
            ctx.abort(grpc.StatusCode.PERMISSION_DENIED, "bad token " + token)
        for r in reqs:
            rep = rep_cls(valid_host=r.host)
            rep.original_request.CopyFrom(r)
            which = r.WhichOneof("message_request")
            if which == "list_services":
                for name in services:
                    rep.list_services_response.service.add(name=name)
            elif which == "file_containing_symbol":
                found = [f for f in fds.file for s in f.service if f.package + "." + s.name == r.file_containing_symbol]
                if found:
                    for f in with_imports(found[0], []):
                        rep.file_descriptor_response.file_descriptor_proto.append(f.SerializeToString())
                else:
                    rep.error_response.error_code = 5
                    rep.error_response.error_message = "symbol not found: " + r.file_containing_symbol
            else:
                rep.error_response.error_code = 12
                rep.error_response.error_message = "not implemented"
            yield rep

    return grpc.method_handlers_generic_handler(service_name, {
        "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
            info, request_deserializer=req_cls.FromString, response_serializer=rep_cls.SerializeToString),
    })


def main():
    args = sys.argv[1:]
    fds, cls = message_classes(args[0])
    req_cls, rep_cls = cls("luaload.test.EchoRequest"), cls("luaload.test.EchoReply")

    def say(req, ctx):
        if req.delay_ms:
            time.sleep(req.delay_ms / 1000.0)
        md = sorted((k, v.hex() if isinstance(v, bytes) else v) for k, v in ctx.invocation_metadata()
                    if k.startswith("x-"))
        ctx.send_initial_metadata((("x-initial", "hi"),))
        ctx.set_trailing_metadata((("x-trailer", "yes"),))
        if req.fail_with:
            ctx.abort(grpc.StatusCode(_code(req.fail_with)), "told to fail: %d ü" % req.fail_with)
        rep = rep_cls(text=req.text, big=req.big, nums=list(req.nums), blob=req.blob, color=req.color,
                      metadata=";".join("%s=%s" % kv for kv in md), padding=b"p" * req.pad)
        for k, v in req.labels.items():
            rep.labels[k] = v
        which = req.WhichOneof("pick")
        if which == "a":
            rep.a = req.a
        elif which == "b":
            rep.b = req.b
        if req.HasField("at"):
            rep.at.CopyFrom(req.at)
        if req.HasField("inner"):
            rep.inner.note = req.inner.note
        return rep

    def count(req, ctx):
        for i in range(max(req.b, 0)):
            if req.delay_ms:
                time.sleep(req.delay_ms / 1000.0)
            yield rep_cls(text="%s %d" % (req.text, i), b=i)
        if req.fail_with:
            ctx.abort(grpc.StatusCode(_code(req.fail_with)), "stream told to fail")

    def sum_(reqs, ctx):
        texts = [r.text for r in reqs]
        return rep_cls(text="+".join(texts), b=len(texts))

    def chat(reqs, ctx):
        for r in reqs:
            yield rep_cls(text="echo " + r.text, b=r.b, metadata=ctx.peer())

    handler = grpc.method_handlers_generic_handler("luaload.test.Echo", {
        "Say": grpc.unary_unary_rpc_method_handler(say, request_deserializer=req_cls.FromString,
                                                   response_serializer=rep_cls.SerializeToString),
        "Count": grpc.unary_stream_rpc_method_handler(count, request_deserializer=req_cls.FromString,
                                                      response_serializer=rep_cls.SerializeToString),
        "Sum": grpc.stream_unary_rpc_method_handler(sum_, request_deserializer=req_cls.FromString,
                                                    response_serializer=rep_cls.SerializeToString),
        "Chat": grpc.stream_stream_rpc_method_handler(chat, request_deserializer=req_cls.FromString,
                                                      response_serializer=rep_cls.SerializeToString),
    })
    # --gzip: responses compressed (grpc-encoding: gzip), where the client accepts it
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8),
                         compression=grpc.Compression.Gzip if "--gzip" in args else None)
    server.add_generic_rpc_handlers((handler,))
    if "--health" in args:  # grpc.health.v1: "" and luaload.test.Echo serving, "down" not, others unknown
        hreq, hrep = cls("grpc.health.v1.HealthCheckRequest"), cls("grpc.health.v1.HealthCheckResponse")

        def check(req, ctx):
            if req.service in ("", "luaload.test.Echo"):
                return hrep(status=1)
            if req.service == "down":
                return hrep(status=2)
            ctx.abort(grpc.StatusCode.NOT_FOUND, "unknown service " + req.service)

        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
            "Check": grpc.unary_unary_rpc_method_handler(check, request_deserializer=hreq.FromString,
                                                         response_serializer=hrep.SerializeToString),
        }),))
    if "--reflection" in args:  # v1, or v1alpha (a server without v1)
        version = args[args.index("--reflection") + 1]
        server.add_generic_rpc_handlers((reflection_handler(fds, cls, "grpc.reflection.%s.ServerReflection" % version),))
    if "--tls" in args:
        i = args.index("--tls")
        cert, key = open(args[i + 1], "rb").read(), open(args[i + 2], "rb").read()
        ca = open(args[args.index("--client-ca") + 1], "rb").read() if "--client-ca" in args else None
        creds = grpc.ssl_server_credentials(((key, cert),), root_certificates=ca, require_client_auth=ca is not None)
        port = server.add_secure_port("127.0.0.1:0", creds)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait()
    server.stop(0)


def _code(n):
    for c in grpc.StatusCode:
        if c.value[0] == n:
            return c.value
    return grpc.StatusCode.UNKNOWN.value


if __name__ == "__main__":
    main()
