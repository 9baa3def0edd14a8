import json, subprocess, sys, os
sys.path.insert(0, "/work/main/tests")
import postgres
out = {}
with postgres.throwaway_cluster() as server:
    url = postgres.fresh_database(server, "serve_bench")
    base = ["madspy", "bench", "serve", "--clients", "16", "--slots", "4", "--requests", "256", "--json"]
    for name, extra in [("one-sqlite", []), ("two-postgresql", ["--replicas", "2", "--store", url])]:
        done = subprocess.run(base + extra, capture_output=True, text=True, env=os.environ | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        print(name, done.stderr[-500:], file=sys.stderr)
        out[name] = {"command": " ".join(base + extra).replace(url, "postgresql://madspy@127.0.0.1:PORT/serve_bench"), **json.loads(done.stdout)}
print(json.dumps(out, indent=2))
