"""Exact arithmetic: a recursive-descent parser over a small grammar, evaluated in fractions.

No ``eval``: the expression is tokenised and parsed here. Every value is a
:class:`~fractions.Fraction`, so ``1/3 + 1/6`` is exactly ``1/2``. Limits keep a hostile or
careless expression cheap: its length, nesting depth, literal size, exponent size and the size
of every intermediate result are bounded, and an exponent that would produce a huge number is
refused *before* it is computed.

Grammar::

    expr   := term (("+" | "-") term)*
    term   := unary (("*" | "/" | "//" | "%") unary)*
    unary  := ("+" | "-") unary | power
    power  := atom (("**" | "^") unary)?
    atom   := NUMBER | "(" expr ")" | NAME "(" expr ("," expr)* ")"
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Context, Decimal
from fractions import Fraction

MAX_CHARS = 1000
MAX_DEPTH = 60
MAX_DIGITS = 4000
"""Largest numerator or denominator, in decimal digits, of any value along the way (below
Python's own 4300-digit limit on turning integers into text)."""
MAX_FACTORIAL = 3000
SHOWN_DIGITS = 50

_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+(?:_\d+)*)?\.?\d+(?:_\d+)*(?:[eE][+-]?\d+)?)|(?P<op>\*\*|//|[-+*/%^(),])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*))"
)


class ExpressionError(ValueError):
    """An expression that cannot be evaluated, with a message that says why."""


def _digits(value: int) -> int:
    # bit_length * log10(2), rounded up: cheap and never below the true count.
    return int(abs(value).bit_length() * 0.30103) + 1


def _check(value: Fraction) -> Fraction:
    if max(_digits(value.numerator), _digits(value.denominator)) > MAX_DIGITS:
        raise ExpressionError(f"a value along the way exceeds {MAX_DIGITS:,} digits")
    return value


def _integer(value: Fraction, what: str) -> int:
    if value.denominator != 1:
        raise ExpressionError(f"{what} must be a whole number, not {value}")
    return value.numerator


def _root(value: int, n: int) -> int | None:
    """The exact integer ``n``-th root of ``value`` >= 0, or ``None``."""
    if value < 2:
        return value
    guess = round(value ** (1.0 / n)) if _digits(value) < 300 else None
    if guess is None:
        low, high = 0, 1 << (value.bit_length() // n + 1)
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if mid**n <= value else (low, mid - 1)
        guess = low
    for candidate in (guess - 1, guess, guess + 1):
        if candidate >= 0 and candidate**n == value:
            return candidate
    return None


def power(base: Fraction, exponent: Fraction) -> Fraction:
    """``base ** exponent`` exactly, refusing results that would be huge or irrational."""
    if exponent.denominator != 1:
        n = exponent.denominator
        if n > 64 or base < 0:
            raise ExpressionError(f"{base} ** {exponent} has no exact rational value")
        num, den = _root(base.numerator, n), _root(base.denominator, n)
        if num is None or den is None:
            raise ExpressionError(f"{base} ** {exponent} is irrational: no exact value")
        base, exponent = Fraction(num, den), Fraction(exponent.numerator)
    e = exponent.numerator
    if base == 0 and e < 0:
        raise ExpressionError("zero cannot be raised to a negative power")
    if base in (0, 1) or e == 0:
        return Fraction(1) if e == 0 else base
    # Estimated before computing: 2 ** 10**9 must be refused, not attempted.
    scale = max(math.log10(abs(base.numerator)), math.log10(base.denominator))
    if scale * abs(e) > MAX_DIGITS:
        raise ExpressionError(
            f"{base} ** {e} would have about {int(scale * abs(e)):,} digits; "
            f"the limit is {MAX_DIGITS:,}"
        )
    return _check(base**e)


def _factorial(value: Fraction) -> Fraction:
    n = _integer(value, "factorial's argument")
    if n < 0 or n > MAX_FACTORIAL:
        raise ExpressionError(f"factorial takes 0..{MAX_FACTORIAL}, not {n}")
    return Fraction(math.factorial(n))


def _sqrt(value: Fraction) -> Fraction:
    if value < 0:
        raise ExpressionError(f"sqrt({value}) is not a real number")
    try:
        return power(value, Fraction(1, 2))
    except ExpressionError:
        approx = Context(prec=SHOWN_DIGITS).sqrt(
            Decimal(value.numerator) / Decimal(value.denominator)
        )
        raise ExpressionError(
            f"sqrt({value}) is irrational, so it has no exact value (about {approx})"
        ) from None


def _round(value: Fraction, places: Fraction = Fraction(0)) -> Fraction:
    p = _integer(places, "round's places")
    if not -MAX_DIGITS <= p <= MAX_DIGITS:
        raise ExpressionError("round's places are out of range")
    scale = Fraction(10) ** p
    return _check(Fraction(round(value * scale)) / scale)


def _gcd(*args: Fraction) -> Fraction:
    return Fraction(math.gcd(*(_integer(a, "gcd's arguments") for a in args)))


def _lcm(*args: Fraction) -> Fraction:
    return _check(Fraction(math.lcm(*(_integer(a, "lcm's arguments") for a in args))))


FUNCTIONS: dict[str, Callable[..., Fraction]] = {
    "abs": lambda x: abs(x),
    "floor": lambda x: Fraction(math.floor(x)),
    "ceil": lambda x: Fraction(math.ceil(x)),
    "round": _round,
    "sqrt": _sqrt,
    "factorial": _factorial,
    "gcd": _gcd,
    "lcm": _lcm,
    "min": lambda *xs: min(xs),
    "max": lambda *xs: max(xs),
}


def _tokens(expression: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    text = expression.rstrip()
    while position < len(text):
        found = _TOKEN.match(text, position)
        if found is None or found.end() == position:
            raise ExpressionError(f"unexpected character {text[position:].lstrip()[:1]!r}")
        kind = found.lastgroup or "op"
        tokens.append((kind, found.group(kind)))
        position = found.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self._tokens = tokens
        self._at = 0
        self._depth = 0

    def _peek(self) -> str | None:
        return self._tokens[self._at][1] if self._at < len(self._tokens) else None

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        if self._at >= len(self._tokens):
            raise ExpressionError("the expression ends too soon")
        token = self._tokens[self._at]
        if expected is not None and token[1] != expected:
            raise ExpressionError(f"expected {expected!r} but found {token[1]!r}")
        self._at += 1
        return token

    def parse(self) -> Fraction:
        value = self._expr()
        if self._at != len(self._tokens):
            raise ExpressionError(f"unexpected {self._tokens[self._at][1]!r}")
        return value

    def _nested(self) -> None:
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise ExpressionError(f"the expression nests deeper than {MAX_DEPTH} levels")

    def _expr(self) -> Fraction:
        value = self._term()
        while self._peek() in ("+", "-"):
            op = self._take()[1]
            right = self._term()
            value = _check(value + right if op == "+" else value - right)
        return value

    def _term(self) -> Fraction:
        value = self._unary()
        while self._peek() in ("*", "/", "//", "%"):
            op = self._take()[1]
            right = self._unary()
            if op == "*":
                value = _check(value * right)
            elif right == 0:
                raise ExpressionError("division by zero")
            elif op == "/":
                value = _check(value / right)
            elif op == "//":
                value = Fraction(value // right)
            else:
                value = _check(value % right)
        return value

    def _unary(self) -> Fraction:
        if self._peek() in ("+", "-"):
            op = self._take()[1]
            self._nested()
            value = self._unary()
            self._depth -= 1
            return -value if op == "-" else value
        return self._power()

    def _power(self) -> Fraction:
        base = self._atom()
        if self._peek() in ("**", "^"):
            self._take()
            self._nested()
            exponent = self._unary()
            self._depth -= 1
            return power(base, exponent)
        return base

    def _atom(self) -> Fraction:
        kind, text = self._take()
        if kind == "num":
            number = Decimal(text.replace("_", ""))
            if len(text) > MAX_DIGITS or abs(number.adjusted()) > MAX_DIGITS:
                raise ExpressionError(f"a number beyond {MAX_DIGITS:,} digits: {text[:20]}")
            return _check(Fraction(number))
        if text == "(":
            self._nested()
            value = self._expr()
            self._take(")")
            self._depth -= 1
            return value
        if kind == "name":
            function = FUNCTIONS.get(text.lower())
            if function is None:
                known = ", ".join(sorted(FUNCTIONS))
                raise ExpressionError(f"unknown function {text!r}; known: {known}")
            self._take("(")
            self._nested()
            args = [self._expr()]
            while self._peek() == ",":
                self._take()
                args.append(self._expr())
            self._take(")")
            self._depth -= 1
            try:
                return _check(function(*args))
            except TypeError:
                raise ExpressionError(f"{text} got {len(args)} arguments") from None
        raise ExpressionError(f"unexpected {text!r}")


def evaluate(expression: str) -> Fraction:
    """The exact value of ``expression``.

    Raises:
        ExpressionError: The expression is malformed, too big, or has no exact value.
    """
    if len(expression) > MAX_CHARS:
        raise ExpressionError(f"the expression is longer than {MAX_CHARS} characters")
    if not expression.strip():
        raise ExpressionError("the expression is empty")
    return _Parser(_tokens(expression)).parse()


def decimal_text(value: Fraction, digits: int = SHOWN_DIGITS) -> str:
    """``value`` as a decimal with up to ``digits`` significant digits."""
    context = Context(prec=digits)
    number = context.divide(Decimal(value.numerator), Decimal(value.denominator))
    text = format(number, "f") if abs(number.adjusted()) < digits else format(number, "e")
    return text.rstrip("0").rstrip(".") if "." in text and "e" not in text else text
