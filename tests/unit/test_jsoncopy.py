"""engine.jsoncopy: deep copies that share nothing with their source, through MessagePack or by a walk."""

from __future__ import annotations

import datetime
import math

from engine.jsoncopy import copy_json, copy_plain


class Lined(dict[str, object]):
    """A dict of another kind, as the package reader's line-keeping maps are."""


def test_copy_json_shares_no_dict_or_list_even_where_the_source_did() -> None:
    shared = {"a": [1, 2]}
    source = {"x": shared, "y": shared, "n": None, "f": 1.5, "nan": math.nan, "t": "ü"}
    copy = copy_json(source)
    assert copy["x"] == copy["y"] == {"a": [1, 2]}
    assert copy["x"] is not copy["y"] and copy["x"]["a"] is not shared["a"]
    assert math.isnan(copy["nan"]) and copy["t"] == "ü" and copy["n"] is None


def test_copy_json_walks_what_messagepack_cannot_hold() -> None:
    source = {"big": [2**80]}
    copy = copy_json(source)
    assert copy == source and copy["big"] is not source["big"]


def test_copy_plain_makes_plain_dicts_and_keeps_other_values() -> None:
    day = datetime.date(2026, 12, 2)
    copy = copy_plain(Lined(a=[Lined(b=day)]))
    assert type(copy) is dict and type(copy["a"][0]) is dict
    assert copy == {"a": [{"b": day}]}
