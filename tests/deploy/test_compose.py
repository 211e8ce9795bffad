"""docker-compose.yml, validated offline: what would go wrong at `docker compose up`, caught here.

No Docker engine or registry is needed: the file is read with PyYAML and checked against the
code it deploys (search attributes, dynamic config, settings names, package version).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any

import pytest
import yaml

from contract.names import SEARCH_ATTRIBUTES
from schemas.codec import CodecSettings
from schemas.settings import Settings
from temporal.devserver import LOW_LATENCY_CONFIG

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"

CONDITIONS = {"service_started", "service_healthy", "service_completed_successfully"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = compose["services"]
    assert isinstance(found, dict)
    return found


def environment(service: dict[str, Any]) -> dict[str, str | None]:
    """A service's environment as a mapping, whichever form the file uses."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        pairs = (item.split("=", 1) if "=" in item else (item, None) for item in env)
        return {key: value for key, value in pairs}
    return {key: None if value is None else str(value) for key, value in env.items()}


def depends_on(service: dict[str, Any]) -> dict[str, str]:
    """Dependency -> condition (the short list form means ``service_started``)."""
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return dict.fromkeys(deps, "service_started")
    return {name: spec.get("condition", "service_started") for name, spec in deps.items()}


def container_ports(service: dict[str, Any]) -> set[int]:
    """Container ports a service publishes (``[ip:]host:container[/proto]``)."""
    ports: set[int] = set()
    for entry in service.get("ports", []):
        text = str(entry["target"]) if isinstance(entry, dict) else str(entry)
        ports.add(int(text.split("/")[0].rsplit(":", 1)[-1]))
    return ports


def host_path(service: dict[str, Any], container_path: str) -> Path:
    """The file a bind mount of ``service`` puts at ``container_path``."""
    for volume in service.get("volumes", []):
        source, target = str(volume).split(":")[:2]
        if not source.startswith((".", "/")):
            continue  # a named volume
        if container_path == target or container_path.startswith(target.rstrip("/") + "/"):
            return (ROOT / source / Path(container_path).relative_to(target)).resolve()
    raise AssertionError(f"nothing is mounted at {container_path}")


def cli_type(key: Any) -> str:
    """The ``temporal operator search-attribute create --type`` name of a key's type."""
    return str(key.indexed_value_type.name).title().replace("_", "")


def test_every_service_has_an_image_or_a_build(services: dict[str, dict[str, Any]]) -> None:
    assert {"postgres", "temporal", "temporal-ui", "register-search-attributes", "worker"} <= set(
        services
    )
    for name, service in services.items():
        assert "image" in service or "build" in service, name


def test_images_are_pinned(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        image = service.get("image")
        if image is None:
            continue
        repository, _, tag = str(image).rpartition(":")
        assert repository and "/" not in tag, f"{name}: {image} has no tag"
        assert tag != "latest" and "$" not in tag, f"{name}: {image} is not pinned"
    assert services["postgres"]["image"] == "pgvector/pgvector:pg17"
    assert re.fullmatch(r"temporalio/auto-setup:1\.2\d\.\d+", services["temporal"]["image"])
    assert str(services["temporal-ui"]["image"]).startswith("temporalio/ui:")


def test_the_worker_image_carries_the_package_version(
    services: dict[str, dict[str, Any]],
) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    worker = services["worker"]
    assert worker["image"].endswith(f":{version}")
    assert worker["build"]["context"] == "."
    assert (ROOT / worker["build"].get("dockerfile", "Dockerfile")).is_file()


def test_published_ports(services: dict[str, dict[str, Any]]) -> None:
    assert 7233 in container_ports(services["temporal"])
    assert 8080 in container_ports(services["temporal-ui"])
    # Workers only dial out: nothing to publish, and replicas would fight over a host port.
    assert container_ports(services["worker"]) == set()


def test_worker_environment_points_at_the_stack(services: dict[str, dict[str, Any]]) -> None:
    env = environment(services["worker"])
    assert env["PERSYN_EMBEDDED"] == "false"
    assert env["PERSYN_TEMPORAL_ADDRESS"] == "temporal:7233"
    url = env["PERSYN_DATABASE_URL"]
    assert url is not None
    match = re.fullmatch(r"postgresql://[^@/]+@(?P<host>[^:/]+):5432/(?P<db>\w+)", url)
    assert match, url
    assert match["host"] in services
    assert match["db"] == environment(services["postgres"])["POSTGRES_DB"]
    # Every PERSYN_* name the file sets is a real setting (a typo would be silently ignored).
    fields = {f"PERSYN_{name.upper()}" for name in Settings.model_fields} | {"PERSYN_LOG_LEVEL"}
    fields |= {f"PERSYN_CODEC_{name.upper()}" for name in CodecSettings.model_fields}
    assert {key for key in env if key.startswith("PERSYN_")} <= fields


def test_provider_keys_pass_through_without_empty_defaults(
    services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env = environment(services["worker"])
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PERSYN_OPENAI_BASE_URL"):
        assert key in env and env[key] is None, f"{key} must pass through, unset when unset"
    # Why: an empty string is a configured key to the settings, and would select the provider.
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    assert Settings().anthropic_api_key is not None


def test_temporal_is_persisted_in_the_postgres_service(
    services: dict[str, dict[str, Any]],
) -> None:
    env = environment(services["temporal"])
    assert env["DB"] == "postgres12"
    assert env["POSTGRES_SEEDS"] in services
    assert "image" in services[str(env["POSTGRES_SEEDS"])]
    assert env["POSTGRES_USER"] == environment(services["postgres"])["POSTGRES_USER"]
    assert env["POSTGRES_PWD"] == environment(services["postgres"])["POSTGRES_PASSWORD"]
    assert environment(services["temporal-ui"])["TEMPORAL_ADDRESS"] == "temporal:7233"


def test_postgres_keeps_its_data_in_a_named_volume(
    compose: dict[str, Any], services: dict[str, dict[str, Any]]
) -> None:
    mounts = [str(v).split(":") for v in services["postgres"]["volumes"]]
    named = [source for source, target, *_ in mounts if target == "/var/lib/postgresql/data"]
    assert named and named[0] in compose["volumes"]


def test_postgres_and_temporal_have_healthchecks(services: dict[str, dict[str, Any]]) -> None:
    postgres = " ".join(services["postgres"]["healthcheck"]["test"])
    temporal = " ".join(services["temporal"]["healthcheck"]["test"])
    assert "pg_isready" in postgres
    assert "temporal operator cluster health" in temporal or "tctl" in temporal


def test_start_order_is_valid_and_acyclic(services: dict[str, dict[str, Any]]) -> None:
    graph = {name: set(depends_on(service)) for name, service in services.items()}
    for name, service in services.items():
        for dependency, condition in depends_on(service).items():
            assert dependency in services, f"{name} depends on unknown {dependency}"
            assert condition in CONDITIONS, f"{name}: {condition}"
            if condition == "service_healthy":
                assert "healthcheck" in services[dependency], f"{dependency} has no healthcheck"
            if condition == "service_completed_successfully":
                # A one-shot that restarts never "completes"; its dependants would never start.
                assert str(services[dependency].get("restart", "no")) == "no", dependency
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as err:
        pytest.fail(f"depends_on has a cycle: {err.args[1]}")
    position = {name: index for index, name in enumerate(order)}
    assert position["postgres"] < position["temporal"] < position["register-search-attributes"]
    assert position["register-search-attributes"] < position["worker"]
    worker = depends_on(services["worker"])
    assert worker["postgres"] == worker["temporal"] == "service_healthy"
    assert worker["register-search-attributes"] == "service_completed_successfully"


def test_long_running_services_restart(services: dict[str, dict[str, Any]]) -> None:
    for name in ("postgres", "temporal", "temporal-ui", "worker"):
        assert services[name]["restart"] in {"always", "unless-stopped", "on-failure"}, name


def test_worker_scale_is_declared(services: dict[str, dict[str, Any]]) -> None:
    assert int(services["worker"]["deploy"]["replicas"]) >= 1
    assert "container_name" not in services["worker"]  # a fixed name would forbid replicas


def test_dynamic_config_is_mounted_and_raises_the_poll_rates(
    services: dict[str, dict[str, Any]],
) -> None:
    temporal = services["temporal"]
    path = environment(temporal)["DYNAMIC_CONFIG_FILE_PATH"]
    assert path is not None and path.startswith("/"), path
    mounted = host_path(temporal, path)
    assert mounted.is_file(), mounted
    assert mounted == ROOT / "temporal" / "dynamicconfig" / "production.yaml"
    config = yaml.safe_load(mounted.read_text())
    for key, value in LOW_LATENCY_CONFIG.items():
        assert config[key] == [{"value": value, "constraints": {}}], key


def test_search_attribute_registration_lists_exactly_persyns(
    services: dict[str, dict[str, Any]],
) -> None:
    register = services["register-search-attributes"]
    script = host_path(register, register["entrypoint"][-1])
    assert script.is_file(), script
    pairs = [str(arg).split("=", 1) for arg in register["command"]]
    registered = {name: kind for name, kind in pairs}
    assert len(registered) == len(pairs), "a name is listed twice"
    assert registered == {key.name: cli_type(key) for key in SEARCH_ATTRIBUTES}
    assert environment(register)["TEMPORAL_ADDRESS"] == "temporal:7233"


def test_compose_accepts_the_file_where_it_is_installed() -> None:
    """The real parser, where a Compose v2 binary exists (CI images with Docker)."""
    for command in (["docker", "compose"], ["docker-compose"]):
        if shutil.which(command[0]) is None:
            continue
        version = subprocess.run([*command, "version"], capture_output=True, text=True)
        # Compose v1 predates parts of the spec this file uses (e.g. required variables).
        if version.returncode == 0 and "version 1." not in version.stdout:
            break
    else:
        pytest.skip("no Docker Compose v2 on this machine")
    result = subprocess.run(
        [*command, "-f", str(COMPOSE_FILE), "config", "--quiet"],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "POSTGRES_PASSWORD": "offline-check"},
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
