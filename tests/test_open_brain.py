"""open_brain: the one place pybrain builds a Brain, for each purpose of its faces."""

from __future__ import annotations

import psycopg
import pytest

from pybrain.api.brain import PURPOSES, open_brain
from pybrain.client import Brain
from pybrain.config import Settings


def test_each_purpose_opens_its_brain(cli_env, db_url: str) -> None:
    settings = Settings.from_env()

    class Mine(Brain):
        pass

    with Mine.open(actor="mine") as mine:  # Brain.open of a subclass builds the subclass
        assert type(mine) is Mine and mine.actor == "mine" and mine.stats()["memories"] == 0
    with open_brain("configured", settings, actor="cli") as configured:
        assert type(configured) is Brain and configured.statement_timeout is None and not configured.as_owner
    conn = psycopg.connect(db_url, autocommit=True)
    with open_brain(
        "hook", settings, conn=conn, conninfo=db_url, actor="hook", statement_timeout="900ms"
    ) as hook:
        assert hook.statement_timeout == "900ms" and hook.scope().statement_timeout == "900ms"
        assert hook.actor == "hook" and hook.stats()["memories"] == 0
    with pytest.raises(ValueError, match="no purpose 'shell'"):
        open_brain("shell", settings)
    assert set(PURPOSES) == {"configured", "person", "admin", "installer", "hook", "pooled"}
