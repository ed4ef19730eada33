"""The deployment files as an operator gets them, checked without Docker: the alert rules by Prometheus' own
promtool (check and unit tests), the compose files' promises (trusted proxies, operator secret, Prometheus and
Grafana not published beyond this host, two replicas per primary, log rotation and memory ceilings), the nginx
configuration's tolerance of an absent server, and the dashboard's queries (no arithmetic on counters that reset)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
COMPOSE_FILES = ("docker-compose.yml", "docker-compose.cluster.yml")
PROMTOOL_HINT = "promtool is missing: run `apt-get install -y prometheus` as root (python3 dev.py test does)"


def compose(name: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))
    return document


def promtool() -> str:
    found = shutil.which("promtool")
    assert found is not None, PROMTOOL_HINT
    return found


def test_the_alert_rules_pass_promtool_check() -> None:
    checked = subprocess.run([promtool(), "check", "rules", str(ALERTS)], capture_output=True, text=True, check=False, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


ALERT_CASES = """
rule_files: [{alerts}]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'up{{job="flowergarden",instance="server-1:8765"}}'
        values: '1 0 0 0'
      - series: 'flowergarden_redis_errors_total{{instance="server-2:8765",command="EVALSHA"}}'
        values: '0+120x20'
      - series: 'redis_memory_used_bytes{{instance="redis-exporter:9121"}}'
        values: '900x20'
      - series: 'redis_memory_max_bytes{{instance="redis-exporter:9121"}}'
        values: '1000x20'
      - series: 'flowergarden_background_worker_up{{instance="server-2:8765",worker="PlayerBooks"}}'
        values: '1 1 0 0 0'
      - series: 'flowergarden_archive_oldest_seconds{{instance="server-1:8765"}}'
        values: '0 0 60+60x20'
      - series: 'flowergarden_archive_oldest_seconds{{instance="server-2:8765"}}'
        values: '0 0 60+60x20'
    alert_rule_test:
      - eval_time: 3m
        alertname: RaceServerDown
        exp_alerts:
          - exp_labels: {{severity: page, job: flowergarden, instance: "server-1:8765"}}
            exp_annotations:
              summary: "race server server-1:8765 is not answering /metrics"
              runbook: "OPERATIONS.md#a-server-process-is-down"
      - eval_time: 12m
        alertname: RedisErrors
        exp_alerts:
          - exp_labels: {{severity: page}}
            exp_annotations:
              summary: "2 Redis commands a second raise in the race servers"
              runbook: "OPERATIONS.md#a-redis-node-lost"
      - eval_time: 10m
        alertname: RedisMemoryNearlyFull
        exp_alerts:
          - exp_labels: {{severity: page, instance: "redis-exporter:9121"}}
            exp_annotations:
              summary: "Redis uses 90% of its maxmemory (writes are refused when full)"
              runbook: "OPERATIONS.md#redis-is-full"
      - eval_time: 4m
        alertname: BackgroundWorkerCrashed
        exp_alerts:
          - exp_labels: {{severity: page, instance: "server-2:8765", worker: PlayerBooks}}
            exp_annotations:
              summary: "worker PlayerBooks of server-2:8765 crashed: restart that process"
              runbook: "OPERATIONS.md#a-bad-deploy"
      - eval_time: 1m
        alertname: RaceServerDown
        exp_alerts: []
      - eval_time: 8m
        alertname: ArchiveLagging
        exp_alerts: []
      - eval_time: 12m
        alertname: ArchiveLagging
        exp_alerts:
          - exp_labels: {{severity: page}}
            exp_annotations:
              summary: "the oldest finished race not in PostgreSQL yet is 11m 0s old (PostgreSQL down or slow?)"
              runbook: "OPERATIONS.md#postgresql-down-or-the-archive-lags"
"""


def test_the_alert_rules_fire_on_the_faults_they_name(tmp_path: Path) -> None:
    cases = tmp_path / "alert-cases.yml"
    cases.write_text(ALERT_CASES.format(alerts=ALERTS), encoding="utf-8")
    tested = subprocess.run([promtool(), "test", "rules", str(cases)], capture_output=True, text=True, check=False, timeout=60)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_alert_names_a_runbook_that_operations_md_has() -> None:
    document = (ROOT / "docs" / "OPERATIONS.md").read_text(encoding="utf-8")
    anchors = {re.sub(r"[^a-z0-9 -]", "", line[4:].strip().lower()).replace(" ", "-") for line in document.splitlines() if line.startswith("### ")}
    rules = [rule for group in yaml.safe_load(ALERTS.read_text(encoding="utf-8"))["groups"] for rule in group["rules"]]
    assert rules
    for rule in rules:
        assert rule["annotations"]["runbook"].split("#", 1)[1] in anchors, rule["alert"]


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_the_servers_of_each_compose_file_trust_the_balancer_and_take_the_operator_secret(name: str) -> None:
    """Without trusted proxies every client shares the balancer's address (one registration budget, one ban for
    all); without the operator secret `flowergarden admin` can do nothing."""
    document = compose(name)
    subnet = document["networks"][next(iter(document["networks"]))]["ipam"]["config"][0]["subnet"]
    for server in ("server-1", "server-2"):
        environment = document["services"][server]["environment"]
        assert environment["FLOWERGARDEN_TRUSTED_PROXIES"] == subnet
        assert environment["FLOWERGARDEN_OPERATOR_SECRET"] == "${FLOWERGARDEN_OPERATOR_SECRET:-}"


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_the_servers_of_each_compose_file_keep_their_records_in_its_postgresql(name: str) -> None:
    """Without DATABASE_URL a server keeps accounts, ratings and histories in Redis only (decision 0012's development
    fallback: a lost Redis loses them). The database is a service of its own with a named volume, healthy before
    the servers start; they migrate it as they start (the rolling upgrade migrates too), with the service's password."""
    document = compose(name)
    postgres = document["services"]["postgres"]
    volume, _, mounted = postgres["volumes"][0].partition(":")
    assert volume in document["volumes"] and mounted == "/var/lib/postgresql/data"
    assert "pg_isready" in postgres["healthcheck"]["test"]
    assert postgres["environment"]["POSTGRES_PASSWORD"] == "${POSTGRES_PASSWORD:-flowergarden}"
    for server in ("server-1", "server-2"):
        spec = document["services"][server]
        user, database = postgres["environment"]["POSTGRES_USER"], postgres["environment"]["POSTGRES_DB"]
        expected = f"postgresql://{user}:${{POSTGRES_PASSWORD:-flowergarden}}@postgres:5432/{database}"
        assert spec["environment"]["DATABASE_URL"] == expected
        assert spec["environment"]["FLOWERGARDEN_MIGRATE"] == "true"
        assert spec["depends_on"]["postgres"] == {"condition": "service_healthy"}


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_each_compose_file_has_prometheus_on_this_host_only_and_grafana_never_on_admin_admin(name: str) -> None:
    services = compose(name)["services"]
    assert "prometheus" in services
    for service in ("prometheus", "grafana"):
        for port in services.get(service, {}).get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{service} published on every interface: {port}"
    if "grafana" in services:
        grafana = services["grafana"]
        assert grafana["environment"]["GF_SECURITY_ADMIN_PASSWORD"] == "${GRAFANA_ADMIN_PASSWORD:-}"
        assert "GF_SECURITY_ADMIN_PASSWORD" in " ".join(grafana["entrypoint"])  # refuses to start without one


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_every_service_rotates_its_logs_and_has_a_memory_ceiling(name: str) -> None:
    for service, spec in compose(name)["services"].items():
        assert spec.get("logging", {}).get("options", {}).get("max-size"), service
        if service != "cluster-init":  # forms the cluster and exits
            assert spec.get("mem_limit"), service


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_sigterm_drains_within_the_compose_stop_grace_period(name: str) -> None:
    """compose kills a container stop_grace_period after SIGTERM: the drain must end before that."""
    server = compose(name)["services"]["server-1"]
    drain = float(server["environment"]["FLOWERGARDEN_SIGTERM_DRAIN_SECONDS"].split(":-")[1].rstrip("}"))
    assert drain < float(server["stop_grace_period"].rstrip("s"))


def test_the_cluster_compose_gives_each_primary_two_replicas() -> None:
    services = compose("docker-compose.cluster.yml")["services"]
    nodes = [name for name in services if re.fullmatch(r"redis-\d+", name)]
    create = " ".join(services["cluster-init"]["command"])
    assert "--cluster-replicas 2" in create
    assert len(nodes) == 9 and all(services[node]["networks"]["cluster"]["ipv4_address"] in create for node in nodes)


def test_nginx_resolves_the_servers_when_used_so_an_absent_one_cannot_stop_it() -> None:
    """An `upstream` naming server-1 directly makes nginx refuse to (re)start while server-1 is absent: the
    server names appear only in variables resolved at request time."""
    text = (ROOT / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    live = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    upstream = live[live.index("upstream flowergarden"):].split("}", 1)[0]
    assert "server-1" not in upstream and "server-2" not in upstream
    assert re.search(r"^\s*resolver\s+127\.0\.0\.11", live, re.MULTILINE)
    assert "set $server_process server-1:8765;" in live and "set $server_process server-2:8765;" in live
    assert 'add_header Strict-Transport-Security "max-age=31536000" always;' in text  # in the TLS block


def test_no_dashboard_query_subtracts_counters() -> None:
    """Counters are per process and restart at 0: a difference of raw counters went negative (-2 live races
    after a restart); every counter in a query is inside rate() or increase()."""
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "dashboards" / "flowergarden.json").read_text(encoding="utf-8"))
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert expressions
    for expression in expressions:
        bare = re.sub(r"(rate|increase)\([^()]*\)", "", expression)
        assert not re.search(r"\w+_total\b", bare), expression


def test_the_kubernetes_example_is_valid_and_probes_ready_and_live() -> None:
    """Checked offline against the Kubernetes 1.30 schemas (strict: a misspelt field is an error)."""
    documents = list(yaml.safe_load_all((ROOT / "deploy" / "kubernetes" / "flowergarden.yaml").read_text(encoding="utf-8")))
    for document in documents:
        kubernetes_validate.validate(document, "1.30", strict=True)
    kinds = {document["kind"]: document for document in documents}
    assert set(kinds) == {"Deployment", "PodDisruptionBudget", "Service"}
    container = kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert (container["readinessProbe"]["httpGet"]["path"], container["livenessProbe"]["httpGet"]["path"]) == ("/ready", "/live")
    assert {"DATABASE_URL", "FLOWERGARDEN_MIGRATE"} <= {item["name"] for item in container["env"]}  # records in PostgreSQL
    drain = next(float(item["value"]) for item in container["env"] if item["name"] == "FLOWERGARDEN_SIGTERM_DRAIN_SECONDS")
    assert drain < kinds["Deployment"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
