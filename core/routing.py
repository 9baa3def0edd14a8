"""One model name served by several deployments: LiteLLM's Router behind the model string ``router/<name>``.

``use_router("router.yaml")`` loads a file in the format LiteLLM's proxy documents (``model_list`` of
deployments, each a ``model_name`` and its ``litellm_params``; optional ``router_settings`` such as
``num_retries``, ``fallbacks``, ``allowed_fails``, ``cooldown_time``, per-deployment ``rpm``/``tpm``).
From then on ``router/qwen`` is a model string like any other: every call goes through
``Router.completion`` on the deployments named ``qwen``, with the Router's load balancing, retries,
cooldowns and fallbacks, and the reply names the deployment that answered (its ``model_info.id``, else
its model and ``api_base``), which the transcript records per call. madspy writes none of that
balancing itself; it registers the Router as a LiteLLM provider, so DSPy, its cache and usage work unchanged.

Example:
    >>> import tempfile, pathlib
    >>> file = pathlib.Path(tempfile.mkdtemp(), "router.yaml")
    >>> _ = file.write_text("model_list:\\n  - model_name: qwen\\n    litellm_params: {model: openai/qwen}\\n")
    >>> use_router(file)
    ['qwen']
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import litellm
import yaml
from litellm import CustomLLM, Router

from madspy.core.errors import InputError, ModelError

PROVIDER = "router"
DEPLOYMENT_HEADER = "x-madspy-deployment"  # carried in the reply's hidden headers, which LiteLLM keeps
ENV = "MADSPY_ROUTER"
_router: Router | None = None


def _deployment(response: Any) -> str | None:
    hidden = getattr(response, "_hidden_params", None) or {}
    if hidden.get("model_id"):
        return str(hidden["model_id"])
    model, base = hidden.get("litellm_model_name"), hidden.get("api_base")
    return f"{model} at {base}" if base else model


def _marked(response: Any) -> Any:
    hidden = response._hidden_params
    hidden["additional_headers"] = (hidden.get("additional_headers") or {}) | {DEPLOYMENT_HEADER: _deployment(response)}
    return response


class _RouterProvider(CustomLLM):
    """``router/<name>`` calls: the Router's completion on the deployments named ``<name>``."""

    @staticmethod
    def _call(model: str, messages: list, kwargs: dict[str, Any]) -> dict[str, Any]:
        ensure(f"{PROVIDER}/{model}")  # LiteLLM hands a provider its model string without the prefix
        timeout = kwargs.get("timeout")
        return {"model": model, "messages": messages, **(kwargs.get("optional_params") or {})} | (
            {"timeout": timeout} if isinstance(timeout, int | float) else {}
        )

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
        return _marked(_router.completion(**self._call(model, messages, kwargs)))

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
        return _marked(await _router.acompletion(**self._call(model, messages, kwargs)))


def _names() -> list[str]:
    """The model names the router serves, each once, in the file's order."""
    return list(dict.fromkeys(d["model_name"] for d in _router.registry().all()))


def deployment_of(response: Any) -> str | None:
    """The deployment that answered a ``router/`` call (None for any other reply).

    >>> deployment_of(None) is None
    True
    """
    headers = (getattr(response, "_hidden_params", None) or {}).get("additional_headers") or {}
    # LiteLLM passes a provider's headers on with its prefix
    return headers.get(f"llm_provider-{DEPLOYMENT_HEADER}") or headers.get(DEPLOYMENT_HEADER)


def register() -> None:
    """Make ``router/`` a LiteLLM provider (once)."""
    if PROVIDER not in litellm._custom_providers:
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": PROVIDER, "custom_handler": _RouterProvider()},
        ]
        litellm.utils.custom_llm_setup()


def ensure(model: str) -> None:
    """Have a router that serves ``model`` (``router/<name>``): the one set, else the file ``$MADSPY_ROUTER``
    names; ModelError when there is none or it has no deployment of that name."""
    if _router is None:
        if not os.environ.get(ENV):
            raise ModelError(f"{model} needs a router file: give --router router.yaml (or set {ENV})")
        use_router(os.environ[ENV])
    name = model.split("/", 1)[-1]
    if name not in _names():
        raise ModelError(f"the router serves {', '.join(_names())}, not {name!r}")
    register()


def use_router(path: str | Path) -> list[str]:
    """Serve ``router/<name>`` by the Router the YAML file ``path`` describes; returns the model names it serves."""
    global _router
    try:
        config = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise InputError(f"cannot read router file {path}: {e}") from None
    deployments = config.get("model_list") if isinstance(config, dict) else None
    if not deployments or not all(
        isinstance(d, dict) and "model_name" in d and "litellm_params" in d for d in deployments
    ):
        raise InputError(
            f"{path}: a router file needs a model_list of deployments, each with model_name and litellm_params"
        )
    try:
        _router = Router(model_list=deployments, **(config.get("router_settings") or {}))
    except (TypeError, ValueError, litellm.exceptions.BadRequestError) as e:
        raise InputError(f"{path}: LiteLLM's Router refused it: {e}") from None
    register()
    return _names()
