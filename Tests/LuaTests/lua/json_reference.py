"""Reference side of JSONDifferentialTests: a generated corpus of tricky JSON texts, each with
its value as decoded by Python's json module, in the canonical form test_json_differential.lua
also produces for Lookout's json.decode.

Usage: python3 json_reference.py SEED COUNT > corpus.txt
Each output line is `<json text>\\t<canonical value>`; the texts contain no raw tab or newline.

Canonical form (what Lookout's decoder must produce for the text):
  n / t / f                 null / true / false
  i<decimal>                an integer: a number without fraction or exponent that fits int64
  d<16 hex digits>          a float, by its IEEE-754 bits (any other number, correctly rounded;
                            beyond the double range: +-inf, as strtod and float() give)
  s<hex bytes>;             a string (lone surrogate escapes as their 3-byte UTF-8-like form)
  [v,v,...]                 an array
  {k:v,...}                 an object, keys (hex) in byte order; the last duplicate wins
  E                         not JSON: the decoder must fail
"""

import json
import random
import struct
import sys
from decimal import Decimal, getcontext
from fractions import Fraction

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)
getcontext().prec = 2000

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def float_bits(x):
    return "d%016x" % struct.unpack("<Q", struct.pack("<d", x))[0]


def int_to_float(i):
    try:
        return float(i)  # correctly rounded
    except OverflowError:
        return float("inf") if i > 0 else float("-inf")


def canonical(v):
    if v is None:
        return "n"
    if v is True:
        return "t"
    if v is False:
        return "f"
    if isinstance(v, int):
        return "i%d" % v if INT64_MIN <= v <= INT64_MAX else float_bits(int_to_float(v))
    if isinstance(v, float):
        return float_bits(v)
    if isinstance(v, str):
        return "s" + v.encode("utf-8", "surrogatepass").hex() + ";"
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    items = sorted((k.encode("utf-8", "surrogatepass").hex(), canonical(x)) for k, x in v.items())
    return "{" + ",".join(k + ":" + x for k, x in items) + "}"


def reject_constant(name):
    raise ValueError("not JSON: " + name)


def reference(text):
    try:
        return canonical(json.loads(text, parse_constant=reject_constant))
    except (ValueError, RecursionError):
        return "E"


# ---- Numbers ------------------------------------------------------------------------------------


def moved_point(digits, rng):
    """The same value as the integer `digits`, written with a decimal point and an exponent."""
    k = rng.randrange(1, len(digits) + 1)
    shift = len(digits) - k
    return digits[:k] + ("." + digits[k:] if k < len(digits) else "") + "e" + str(shift)


def exact_decimal(x):
    """The exact decimal expansion of a Fraction with a power-of-two denominator."""
    d = Decimal(x.numerator) / Decimal(x.denominator)
    return format(d, "E").replace("E", "e")


def halfway_cases(rng, n):
    out = []
    for _ in range(n):
        bits = rng.randrange(1, 0x7FF0000000000000)
        x = struct.unpack("<d", struct.pack("<Q", bits))[0]
        y = struct.unpack("<d", struct.pack("<Q", bits + 1))[0]
        mid = (Fraction(x) + Fraction(y)) / 2
        out.append(exact_decimal(mid))
        # a hair above and below the midpoint: must round up / down
        out.append(exact_decimal(mid + Fraction(1, 10**1200)))
        out.append(exact_decimal(mid - Fraction(1, 10**1200)))
    return out


def number_corpus(rng, count):
    nums = [
        "18446744073709551616", "1" + "0" * 64, "1844674407370955161.6e-17",
        "0", "-0", "0.0", "-0.0", "0e0", "0E+5", "-0e-5", "0.000e-400", "1e-400", "-1e-400",
        "1e309", "-1e309", "1e400", "4.9e-324", "2.4703282292062328e-324",
        "2.4703282292062327e-324", "2.2250738585072011e-308", "2.2250738585072012e-308",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "9007199254740992", "9007199254740993", "9007199254740993.0", "9007199254740993e0",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551617",
        "0.1", "0.2", "0.3", "1e22", "1e23", "8.98846567431158e307",
        "123456789012345678901234567890", "0.1e1", "100e-2", "1E0",
        "0." + "0" * 400 + "1e401", "0." + "0" * 100000 + "1e100001", "0." + "0" * 99999 + "1e1000000",
        "-0." + "0" * 100000 + "15e1000001",
        "1" + "0" * 100005 + "e-100005", "0." + "0" * 30, "1" + "0" * 400,
    ]
    for k in range(1, 40):  # multiples of 2^64, and 2^64 - 1, + 1
        m = k * 2**64
        nums += [str(m), str(m - 1), str(m + 1), "-" + str(m)]
    for e in range(0, 420, 3):
        nums.append(str(10**e))
        nums.append(moved_point(str(10**e), rng))
    for e in range(0, 1100, 7):
        nums.append(str(2**e))
    for base in (2**53, 2**63, 2**64, 10**19, 10**20):
        for delta in range(-3, 4):
            digits = str(base + delta)
            nums += [digits, moved_point(digits, rng), digits + ".0", "-" + digits]
    nums += halfway_cases(rng, 60)
    while len(nums) < count:
        n = rng.randrange(1, 45)
        digits = str(rng.randrange(1, 10)) + "".join(rng.choice("0123456789") for _ in range(n - 1))
        r = rng.random()
        if r < 0.3:
            text = digits
        elif r < 0.6:
            text = moved_point(digits, rng)
        elif r < 0.8:
            text = "0." + "0" * rng.randrange(0, 30) + digits + "e" + str(rng.randrange(-40, 60))
        else:
            text = digits + "e" + str(rng.randrange(-360, 330))
        if rng.random() < 0.3:
            text = "-" + text
        nums.append(text)
    return nums


# ---- Documents ----------------------------------------------------------------------------------

CHARS = ["a", "Z", " ", "é", "€", "😀", "\x7f", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n",
         "\\r", "\\t", "\\u0000", "\\u001f", "\\u00e9", "\\u20AC", "\\ud83d\\ude00", "\\uD800",
         "\\udc00", "\\ud800\\u0041", "\\uffff"]


def json_string(rng):
    return '"' + "".join(rng.choice(CHARS) for _ in range(rng.randrange(0, 8))) + '"'


def ws(rng):
    return rng.choice(["", "", "", " ", "  ", "\r", " \r "])


def document(rng, nums, depth=0):
    r = rng.random()
    if depth > 5 or r < 0.35:
        return rng.choice([rng.choice(nums), json_string(rng), "true", "false", "null"])
    n = rng.randrange(0, 5)
    if r < 0.65:
        items = [ws(rng) + document(rng, nums, depth + 1) + ws(rng) for _ in range(n)]
        return "[" + ",".join(items) + "]"
    keys = ['"k%d"' % rng.randrange(0, 4) if rng.random() < 0.7 else json_string(rng) for _ in range(n)]
    items = [ws(rng) + k + ws(rng) + ":" + document(rng, nums, depth + 1) for k in keys]
    return "{" + ",".join(items) + ws(rng) + "}"


INVALID = ["", " ", "01", "-01", "00", "1.", ".5", "+1", "-", "1e", "1e+", "0x10", "1.5.3",
           "NaN", "Infinity", "-Infinity", "nan", "inf", "[1,]", '{"a":1,}', "[1 2]", '{"a" 1}',
           '{1:2}', '"abc', '"\\x"', '"\\u12"', '"\\uzzzz"', '"a\x01b"', "tru", "nul", "[",
           "]", "{", '{"a":}', "[,1]", "1 2", '"\\ud800\\uzzzz"', "\x0c1", "--1", "1e5e5"]


def mutate(text, rng):
    """One ASCII edit of text (the result stays valid UTF-8, without tab or newline)."""
    positions = [i for i, c in enumerate(text) if ord(c) < 128] or [0]
    i = rng.choice(positions)
    c = rng.choice('{}[]:,"\\ .-+eE0123456789tfnu\x01')
    op = rng.random()
    if op < 0.4:
        return text[:i] + text[i + 1:]
    if op < 0.7:
        return text[:i] + c + text[i:]
    return text[:i] + c + text[i + 1:]


def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    nums = number_corpus(rng, count)
    texts = list(nums)
    texts += ["[" + ",".join(rng.sample(nums, 20)) + "]" for _ in range(count // 20)]
    docs = [document(rng, nums) for _ in range(count)]
    texts += docs
    texts += INVALID
    texts += [mutate(rng.choice(docs), rng) for _ in range(count // 2)]
    out = sys.stdout
    for text in texts:
        assert "\t" not in text and "\n" not in text
        out.write(text + "\t" + reference(text) + "\n")


if __name__ == "__main__":
    main()
