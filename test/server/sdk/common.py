"""Shared helpers for the scripts that drive RAGFlow's Python SDK (0.25.6) against `ragloom serve`.

Run by test/server/ragflow-sdk.test.ts with /usr/bin/python3 and
PYTHONPATH=<shared>/clients/ragflow-sdk-0.25.6/vendor:<shared>/clients/ragflow-sdk-0.25.6.

Environment:
  RAGLOOM_URL   the server's base URL (http://127.0.0.1:PORT); the SDK adds /api/v1
  RAGLOOM_KEY   the API key the script acts with
  RAGLOOM_KEY2  another user's key (a foreign tenant), for the ownership checks
  RAGLOOM_IN    optional JSON input (ids made by an earlier script)

Each script records every call under a name, as {"ok": <value>} or
{"error": <exception class>, "message": str(e), "code": e.code if any}, and prints the whole
record as one JSON line prefixed with RESULT_MARK; the test asserts on it.
"""
import base64
import json
import os
import sys
import time

from ragflow_sdk import RAGFlow
from ragflow_sdk.modules.base import Base

RESULT_MARK = "RAGLOOM_SDK_RESULT "

URL = os.environ["RAGLOOM_URL"]
INPUT = json.loads(os.environ.get("RAGLOOM_IN") or "{}")


def client(var="RAGLOOM_KEY"):
    return RAGFlow(api_key=os.environ[var], base_url=URL)


def plain(v):
    """A JSON-able copy of an SDK value (objects via to_json(), bytes as base64)."""
    if isinstance(v, Base):
        return plain(v.to_json())
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return {"base64": base64.b64encode(bytes(v)).decode("ascii")}
    return v


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class Recorder:
    def __init__(self):
        self.out = {}

    def call(self, name, fn):
        """Runs fn(); records its value (or the exception it raised) under name; returns the value or None."""
        if name in self.out:
            raise KeyError(f"duplicate record name {name}")
        try:
            value = fn()
        except Exception as e:  # the SDK raises Exception(message) from the envelope
            rec = {"error": type(e).__name__, "message": str(e)}
            code = getattr(e, "code", None)
            if code is not None:
                rec["code"] = code
            self.out[name] = rec
            return None
        self.out[name] = {"ok": plain(value)}
        return value

    def put(self, name, value):
        """Records a value computed by the script."""
        if name in self.out:
            raise KeyError(f"duplicate record name {name}")
        self.out[name] = {"ok": plain(value)}
        return value

    def emit(self):
        sys.stdout.write(RESULT_MARK + json.dumps(self.out) + "\n")
        sys.stdout.flush()


def tick():
    """Keeps create_time values of consecutive creations apart (ordering checks)."""
    time.sleep(0.005)
