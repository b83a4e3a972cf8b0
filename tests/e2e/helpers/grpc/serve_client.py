#!/usr/bin/python3
"""A gRPC client on Debian's python3-grpcio for test_serve_grpc.sh: calls
`luaload serve`'s h2c echo with the messages of a descriptor set (protoc
--descriptor_set_out of scripts/examples/data/echo.proto, argv[1]; no
generated code) at host:port (argv[2]), and prints one line per check:

  unary OK|<diff>          Say: every field back as sent
  status <code> <details>  Say with x-echo-status: 7
  bidi <order>             Chat: each message written after the echo of
                           the one before (w1,e1,w2,e2,w3,e3)
  gzip <code> <details>    Say with a gzip-compressed message
"""
import queue
import sys

import grpc

from grpc_server import message_classes  # the same descriptor-set loading, beside this file


def main():
    Msg = message_classes(sys.argv[1])[1]("luaload.example.Msg")
    ch = grpc.insecure_channel(sys.argv[2])
    say = ch.unary_unary("/luaload.example.Echo/Say", request_serializer=Msg.SerializeToString,
                         response_deserializer=Msg.FromString)
    chat = ch.stream_stream("/luaload.example.Echo/Chat", request_serializer=Msg.SerializeToString,
                            response_deserializer=Msg.FromString)

    sent = Msg(text="héllo", seq=9007199254740993, tags=["x", "y"], mood=2)
    sent.author.name = "python"
    sent.author.vu = 3
    got = say(sent, timeout=5)
    print("unary", "OK" if got == sent else "%r != %r" % (got, sent))

    try:
        say(Msg(text="x"), metadata=(("x-echo-status", "7"),), timeout=5)
        print("status none")
    except grpc.RpcError as e:
        print("status", e.code().value[0], e.details())

    # each message written only once the echo of the one before is back
    echoes = queue.Queue()
    order = []

    def requests():
        for i in range(1, 4):
            order.append("w%d" % i)
            yield Msg(text="line", seq=i)
            echoes.get(timeout=5)

    for m in chat(requests(), timeout=10):
        order.append("e%d" % m.seq)
        echoes.put(m)
    print("bidi", ",".join(order))

    try:
        say(Msg(text="zip" * 100), compression=grpc.Compression.Gzip, timeout=5)
        print("gzip none")
    except grpc.RpcError as e:
        print("gzip", e.code().value[0], e.details())


main()
