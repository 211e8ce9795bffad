"""`persyn up` finds a model server already running here and every process uses the same one."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from activities.gateway.plans import compatible_plan, local_plan
from activities.gateway.registry import ModelRegistry, choose_provider
from schemas.detected_server import read_detected, record_path
from schemas.models import CallPlan, ProviderName, TaskType
from schemas.settings import Settings
from store.private_files import private_dir
from temporal.devserver import free_port
from usecases.mind import describe
from workers import detect
from workers.model_server import wanted

OLLAMA_TAGS = {
    "models": [
        {"name": "qwen2.5:0.5b", "details": {"parameter_size": "494.03M", "family": "qwen2"}},
        {"name": "llama3.1:8b", "details": {"parameter_size": "8.0B", "family": "llama"}},
        {"name": "nomic-embed-text:latest", "details": {"parameter_size": "137M"}},
    ]
}


def models(*names: str) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": n, "object": "model"} for n in names]}


class Routes:
    """A local HTTP server answering GETs from a table (anything else: 404)."""

    def __init__(self, routes: dict[str, Any]) -> None:
        table = routes

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = table.get(self.path)
                raw = json.dumps(body).encode() if body is not None else b"<html>no</html>"
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    private_dir(tmp_path / "home")
    return tmp_path / "home"


@pytest.fixture
def ollama() -> Iterator[Routes]:
    server = Routes(
        {
            "/api/tags": OLLAMA_TAGS,
            "/v1/models": models("qwen2.5:0.5b", "llama3.1:8b", "nomic-embed-text:latest"),
        }
    )
    yield server
    server.close()


@pytest.fixture
def vllm() -> Iterator[Routes]:
    server = Routes({"/v1/models": models("Qwen/Qwen2.5-14B-Instruct", "BAAI/bge-m3")})
    yield server
    server.close()


@pytest.fixture
def not_a_model_server() -> Iterator[Routes]:
    server = Routes({"/": {"hello": "world"}})
    yield server
    server.close()


def looking_at(home: Path, *urls: str, **values: Any) -> Settings:
    return Settings(home=home, local_servers=list(urls), **values)


def test_ollamas_largest_chat_model_is_chosen_and_embeddings_passed_over(
    home: Path, ollama: Routes
) -> None:
    found = detect.detect(looking_at(home, ollama.url))

    assert found is not None
    assert (found.server, found.model, found.parameters) == ("Ollama", "llama3.1:8b", "8.0B")
    assert found.base_url == f"{ollama.url}/v1"


def test_the_largest_model_across_servers_wins_by_the_size_in_its_name(
    home: Path, ollama: Routes, vllm: Routes
) -> None:
    found = detect.detect(looking_at(home, ollama.url, vllm.url))

    assert found is not None
    assert (found.model, found.parameters) == ("Qwen/Qwen2.5-14B-Instruct", "14B")
    assert found.server == "an OpenAI-compatible server"  # not on a port anyone is known by


def test_nothing_listening_or_nothing_that_serves_models_finds_nothing(
    home: Path, not_a_model_server: Routes
) -> None:
    closed = f"http://127.0.0.1:{free_port()}"

    assert detect.detect(looking_at(home, closed, not_a_model_server.url)) is None


def test_the_stacks_own_model_server_is_not_mistaken_for_one_already_running(
    home: Path, ollama: Routes
) -> None:
    own = int(ollama.url.rsplit(":", 1)[1])

    assert detect.detect(looking_at(home, ollama.url, local_model_port=own)) is None


def test_a_recorded_server_is_the_mind_of_every_process_on_that_home(
    home: Path, ollama: Routes
) -> None:
    settings = looking_at(home, ollama.url)
    assert detect.may_detect(settings)
    detect.record(settings, detect.detect(settings))

    again = Settings(home=home)  # as the supervisor, the worker and `persyn status` build it
    assert again.detected is not None and again.detected.model == "llama3.1:8b"
    assert choose_provider(again) is ProviderName.OPENAI_COMPATIBLE
    assert again.openai_base_url == f"{ollama.url}/v1"
    assert again.openai_compatible_model == "llama3.1:8b"
    assert not wanted(again)  # the built-in model server is not started
    assert describe(again)[0].startswith("mind: llama3.1:8b, 8.0B on Ollama at")
    assert detect.may_detect(again)  # the next `persyn up` looks again

    detect.record(again, None)  # ... and finds it gone
    assert read_detected(home) is None and not record_path(home).exists()
    assert choose_provider(Settings(home=home)) is ProviderName.LOCAL


def test_an_operators_choice_wins_over_a_recorded_server(home: Path, ollama: Routes) -> None:
    settings = looking_at(home, ollama.url)
    detect.record(settings, detect.detect(settings))

    chosen = [
        Settings(home=home, provider="local"),
        Settings(home=home, anthropic_api_key=SecretStr("key")),
        Settings(home=home, openai_base_url="http://127.0.0.1:9/v1"),
    ]

    assert [s.detected for s in chosen] == [None, None, None]
    assert [choose_provider(s) for s in chosen] == [
        ProviderName.LOCAL,
        ProviderName.ANTHROPIC,
        ProviderName.OPENAI_COMPATIBLE,
    ]
    assert not any(detect.may_detect(s) for s in chosen)
    assert not detect.may_detect(Settings(home=home, local_servers=[]))


def test_the_tiny_model_says_what_it_is_and_the_three_ways_to_a_full_agent(home: Path) -> None:
    lines = describe(Settings(home=home, provider="local"))

    assert lines[0].startswith("mind: SmolLM2-135M, the built-in tiny model")
    assert "self-critique" in lines[1] and "tools" in lines[1]
    ways = [line for line in lines if line.startswith("  - ")]
    assert len(ways) == 3
    assert [w.split(":")[0] for w in ways] == [
        "  - a key",
        "  - a local server",
        "  - a bigger model file",
    ]


@pytest.fixture
def small_only() -> Iterator[Routes]:
    # llama-cpp-python's server names a model after its file.
    server = Routes({"/v1/models": models("SmolLM2-135M-Instruct-Q8_0")})
    yield server
    server.close()


def found_at(home: Path, url: str) -> tuple[Settings, CallPlan]:
    """Settings after `persyn up` found the server at ``url``, and the plan it runs on."""
    settings = looking_at(home, url)
    detect.record(settings, detect.detect(settings))
    found = Settings(home=home)
    return found, ModelRegistry.from_settings(found).plan(ProviderName.OPENAI_COMPATIBLE)


def test_a_small_model_found_runs_on_the_small_model_plan_and_says_so(
    home: Path, small_only: Routes
) -> None:
    found, plan = found_at(home, small_only.url)

    assert found.detected is not None and found.detected.billions() == pytest.approx(0.135)
    assert plan == local_plan()
    lines = describe(found)
    assert "self-critique" in lines[1] and "tools" in lines[1]


def test_a_large_model_found_runs_the_whole_pipeline_with_schemas_clamped(
    home: Path, ollama: Routes
) -> None:
    found, plan = found_at(home, ollama.url)

    assert plan == compatible_plan()
    assert all(plan.stage(task).run for task in TaskType) and plan.offer_tools
    assert describe(found) == [describe(found)[0]]
