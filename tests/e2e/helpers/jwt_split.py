#!/usr/bin/env python3
# jwt_split.py TOKEN DIR -- a JWT taken apart for the openssl command line:
# DIR/msg (the signing input), DIR/sig (the raw signature), DIR/sig.der
# (an ES signature's r||s as an ASN.1 SEQUENCE), DIR/header.json and
# DIR/payload.json. Used by test_jwt.sh and test_quick_jwt.sh.
import base64, sys
tok, d = sys.argv[1], sys.argv[2]
def b(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
h, p, s = tok.split(".")
open(d + "/msg", "wb").write((h + "." + p).encode())
sig = b(s)
open(d + "/sig", "wb").write(sig)
open(d + "/header.json", "wb").write(b(h))
open(d + "/payload.json", "wb").write(b(p))
def der_int(x):
    x = x.lstrip(b"\0") or b"\0"
    if x[0] & 0x80: x = b"\0" + x
    return b"\x02" + der_len(len(x)) + x
def der_len(n): return bytes([n]) if n < 128 else bytes([0x81, n])
if b'"ES' in b(h):
    n = len(sig) // 2
    body = der_int(sig[:n]) + der_int(sig[n:])
    open(d + "/sig.der", "wb").write(b"\x30" + der_len(len(body)) + body)
