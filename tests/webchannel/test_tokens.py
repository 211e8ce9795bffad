"""``persyn tokens``: the plain token is printed once and only its hash is stored."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from sqlmodel import select

from store.db import Database
from store.tables.web_tokens import WebTokenRow
from tests.harness import Stack
from usecases.tokens import authenticate, digest


async def persyn(stack: Stack, home: Path, *args: str) -> tuple[int, str, str]:
    env = {
        **os.environ,
        "PERSYN_HOME": str(home),
        "PERSYN_DATABASE_URL": stack.dsn,
        "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
        "PERSYN_EMBEDDED": "false",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cli.main",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_create_list_revoke(stack: Stack, tmp_path: Path) -> None:
    code, out, err = await persyn(stack, tmp_path, "tokens", "create", "crm", "--agent", "ada")
    assert code == 0, err
    plain = out.strip()
    assert plain.startswith("persyn_") and "shown only now" in err
    db = Database(stack.dsn, pool_size=1)
    try:
        async with db.session() as session:
            rows = (await session.exec(select(WebTokenRow))).all()
        stored = next(row for row in rows if row.token_hash == digest(plain))
        assert plain not in {value for row in rows for value in (row.token_hash, row.name)}
        assert stored.agents == ["ada"]
        assert (await authenticate(db=db, token=plain)) is not None

        code, out, _ = await persyn(stack, tmp_path, "tokens", "list", "--json")
        listed = {t["token_id"]: t for t in json.loads(out)}
        assert code == 0 and listed[stored.id]["name"] == "crm"
        assert "token" not in listed[stored.id] and plain not in out

        code, out, _ = await persyn(stack, tmp_path, "tokens", "revoke", stored.id)
        assert code == 0 and out.strip() == f"token {stored.id} (crm) is revoked"
        assert await authenticate(db=db, token=plain) is None

        code, _, err = await persyn(stack, tmp_path, "tokens", "revoke", "not-a-ulid")
        assert code == 1 and err.startswith("error: token id 'not-a-ulid' is not a ULID")
    finally:
        await db.aclose()


async def test_rotate_makes_a_replacement_in_the_same_tenant(stack: Stack, tmp_path: Path) -> None:
    code, out, err = await persyn(stack, tmp_path, "tokens", "create", "helpdesk", "--json")
    assert code == 0, err
    old = json.loads(out)
    code, out, err = await persyn(stack, tmp_path, "tokens", "rotate", old["token_id"], "--json")
    assert code == 0, err
    new = json.loads(out)
    db = Database(stack.dsn, pool_size=1)
    try:
        still = await authenticate(db=db, token=old["token"])
        replacement = await authenticate(db=db, token=new["token"])
    finally:
        await db.aclose()
    assert new["token_id"] != old["token_id"] and new["name"] == "helpdesk"
    assert replacement is not None and replacement.tenant == old["tenant"] == old["token_id"]
    assert still is not None  # the old token works until it is revoked

    code, _, err = await persyn(stack, tmp_path, "tokens", "rotate", "01JD3MB1C2D3E4F5G6H7J8K9M0")
    assert code == 1 and "there is no token 01JD3MB1C2D3E4F5G6H7J8K9M0" in err
