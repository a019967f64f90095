"""Plausible technical notes for the generated vaults: titles, tags, bodies.

Agents' memories are short operational write-ups: what broke, what was
decided, which setting works, with host names, ticket numbers, versions,
commands and numbers in them.  This module makes such text from word lists
and sentence templates (all written for memlens), so that file sizes, the
word distribution (a few very common words, a long tail of identifiers) and
the tokens a TF-IDF index sees look like the real thing.  Everything is
drawn from the `random.Random` given, so a seed gives the same vaults.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field


def _items(text: str) -> tuple[str, ...]:
    """A word list written as comma-separated text (items may hold spaces)."""
    return tuple(item.strip() for item in text.split(",") if item.strip())


SERVICES = _items(
    """
    postgres, redis, nginx, caddy, kafka, rabbitmq, elasticsearch, grafana, prometheus,
    loki, traefik, minio, vault, consul, etcd, kubernetes, docker, podman, systemd, cron,
    celery, gunicorn, uvicorn, django, fastapi, flask, react, nextjs, webpack, vite,
    terraform, ansible, github-actions, gitlab-ci, jenkins, sentry, cloudflare, s3, restic,
    borg, proxmox, zfs, wireguard, tailscale, openssh, letsencrypt, mysql, sqlite, mongodb,
    clickhouse, airflow, dbt, pandas, numpy, pytest, mypy, ruff, poetry, pip, node, npm,
    pnpm, rust, cargo, go, discord-bot, slack, stripe, twilio, openai-api, anthropic-api,
    ollama, llama-cpp, whisper, ffmpeg, imagemagick, pgbouncer, haproxy, keycloak
    """
)
COMPONENTS = _items(
    """
    connection pool, worker queue, cache layer, auth middleware, migration, backup job,
    health check, rate limiter, retry loop, session store, webhook handler,
    ingest pipeline, search index, log shipper, reverse proxy, build step, test fixture,
    config loader, scheduler, event stream, billing export, report generator,
    embedding job, vector store, prompt cache, feature flag, deploy script,
    container image, load balancer, dns record, tls certificate, disk quota, memory limit,
    thread pool, file watcher, api client, websocket bridge, cli wrapper, metrics exporter,
    alert rule
    """
)
SYMPTOMS = _items(
    """
    timeouts, memory leak, slow queries, dropped connections, stale reads,
    duplicate events, deadlock, OOM kills, cold start latency, flaky tests,
    disk filling up, certificate expiry, high CPU, lost writes, clock skew, retry storm,
    cache stampede, silent failures, 502 errors, permission denied, encoding errors,
    schema drift, race condition, zombie processes, slow builds, broken pipe,
    connection refused, token expiry, index bloat, replication lag
    """
)
ACTIONS = _items(
    """
    raised, lowered, pinned, disabled, enabled, moved, split, merged, replaced, rewrote,
    cached, batched, throttled, retried, rotated, vacuumed, reindexed, restarted,
    rolled back, upgraded, downgraded, tuned, documented, scripted, monitored, sharded,
    compressed, pruned
    """
)
SETTINGS = _items(
    """
    max_connections, socket_timeout, keepalive, work_mem, shared_buffers, maxmemory-policy,
    worker_concurrency, prefetch_count, retry_backoff, pool_size, statement_timeout,
    client_max_body_size, proxy_read_timeout, ulimit nofile, vm.swappiness, GOMAXPROCS,
    PYTHONHASHSEED, UV_THREADPOOL_SIZE, autovacuum_scale_factor, wal_keep_size,
    log_retention, batch_size, ttl, heap size, gc interval, read replicas, request quota,
    chunk size
    """
)
REASONS = _items(
    """
    the default was sized for a laptop, traffic doubled after the launch,
    the old value hid the real error, the vendor changed their limits,
    nobody remembered why it was set, it only failed under load,
    the nightly job overlapped with the backup, the container had no swap,
    the library retried on its own as well, two services shared one pool,
    the logs were rotated before anyone read them, the test ran against production data,
    the cache key ignored the tenant, the migration locked the whole table,
    the clock on the host drifted, the upstream sent gzip without saying so
    """
)
OUTCOMES = _items(
    """
    p95 latency went from {a} ms to {b} ms, errors dropped to {a} per day,
    the job now finishes in {a} minutes instead of {b}, memory stays under {a} MB,
    no alerts for {a} days since, the build is {a}% faster,
    the queue drains within {a} seconds, disk usage fell by {a} GB,
    throughput is back to {a} requests per second, restores take {a} minutes end to end
    """
)
PEOPLE = _items(
    """
    Ana, Ben, Chen, Dara, Eli, Farah, Gus, Hana, Ivan, Jo, Kemi, Luis, Mira, Noor, Omar,
    Priya, Quinn, Rosa, Sam, Tariq, Uma
    """
)
PROJECTS = _items(
    """
    major-domo, homelab, billing, onboarding, data-platform, mobile-app, website,
    agent-runtime, observability, infra, support-bot, analytics, payments, search,
    notifications, ml-pipeline, docs, auth, crm-sync
    """
)
ENVS = ("prod", "staging", "dev", "ci", "edge", "eu-west", "us-east", "lab")
VERBS = _items(
    """
    check, verify, restart, drain, tail, grep, bump, tag, deploy, snapshot, restore,
    compare, profile, bisect, rerun, annotate
    """
)
FILLER = _items(
    """
    for now, as a stopgap, until the next release, on every host, in the nightly run,
    per tenant, behind a flag, in both regions, without downtime, after hours,
    in one transaction, with a dry run first
    """
)
RELATION_TYPES = _items(
    """
    SOLVES, CAUSES, BUILDS_ON, ALTERNATIVE_TO, REQUIRES, FOLLOWS, RELATED_TO
    """
)


def zipf_pick(rng: random.Random, items: Sequence[str]) -> str:
    """One item, the first ones much more likely (word use follows Zipf's law)."""
    # Inverse-CDF of a 1/rank law, close enough for text and cheap.
    u = rng.random()
    return items[min(len(items) - 1, int(math.exp(u * math.log(len(items) + 1))) - 1)]


@dataclass
class Prose:
    """Draws titles, tags and bodies; one instance per generated tree."""

    rng: random.Random
    #: Identifiers made up once (function names, hosts): the long tail of the vocabulary.
    idents: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)

    @classmethod
    def make(cls, rng: random.Random) -> Prose:
        parts = ("load", "sync", "parse", "flush", "retry", "fetch", "build", "merge", "emit")
        nouns = ("batch", "row", "token", "event", "job", "page", "chunk", "blob", "user")
        idents = sorted(
            {
                f"{rng.choice(parts)}_{rng.choice(nouns)}{rng.choice(('', 's', '_v2', '_all'))}"
                for _ in range(400)
            }
        )
        hosts = sorted({f"{rng.choice(SERVICES)[:6]}-{rng.randint(1, 40):02d}" for _ in range(300)})
        rng.shuffle(idents)
        rng.shuffle(hosts)
        return cls(rng, idents, hosts)

    # ------------------------------------------------------------------ small parts
    def _num(self) -> int:
        return self.rng.choice((2, 3, 5, 8, 10, 15, 20, 30, 45, 60, 90, 120, 250, 500, 1200))

    def _ticket(self) -> str:
        return f"{self.rng.choice(('OPS', 'INC', 'DEV', 'BUG'))}-{self.rng.randint(100, 9999)}"

    def _version(self) -> str:
        r = self.rng
        return f"{r.randint(0, 17)}.{r.randint(0, 30)}.{r.randint(0, 12)}"

    def service(self) -> str:
        return zipf_pick(self.rng, SERVICES)

    def topic(self) -> tuple[str, str, str]:
        """(service, component, symptom) a memory is about."""
        r = self.rng
        return self.service(), zipf_pick(r, COMPONENTS), zipf_pick(r, SYMPTOMS)

    # ------------------------------------------------------------------ titles and tags
    def title(self, topic: tuple[str, str, str]) -> str:
        service, component, symptom = topic
        r = self.rng
        forms = (
            f"Fixed {service} {symptom} in the {component}",
            f"{service.capitalize()} {component} {symptom} after upgrade to {self._version()}",
            f"Decided to keep the {component} on {service}",
            f"Why the {component} shows {symptom} on {zipf_pick(r, ENVS)}",
            f"{zipf_pick(r, ACTIONS).capitalize()} {zipf_pick(r, SETTINGS)} for {service}",
            f"How to {r.choice(VERBS)} the {service} {component}",
            f"{service.capitalize()} {symptom} traced to {zipf_pick(r, SETTINGS)}",
            f"Runbook: {symptom} in {zipf_pick(r, PROJECTS)} {component}",
        )
        return r.choice(forms)

    def tags(self, topic: tuple[str, str, str]) -> list[str]:
        """1-5 tags: the service, often the project and environment, sometimes more."""
        r = self.rng
        tags = [topic[0]]
        if r.random() < 0.7:
            tags.append(zipf_pick(r, PROJECTS))
        if r.random() < 0.4:
            tags.append(zipf_pick(r, ENVS))
        if r.random() < 0.3:
            tags.append(topic[2].replace(" ", "-").lower())
        if r.random() < 0.2:
            tags.append(self.service())
        return list(dict.fromkeys(tags))

    # ------------------------------------------------------------------ sentences
    def sentence(self, topic: tuple[str, str, str]) -> str:
        service, component, symptom = topic
        r = self.rng
        setting = zipf_pick(r, SETTINGS)
        outcome = r.choice(OUTCOMES).format(a=self._num(), b=self._num() * 3)
        forms = (
            f"The {component} on {self._host()} started showing {symptom} around {self._time()}.",
            f"Root cause: {r.choice(REASONS)}.",
            f"We {zipf_pick(r, ACTIONS)} {setting} to {self._num()} {r.choice(FILLER)}.",
            f"After that {outcome}.",
            f"{r.choice(PEOPLE)} confirmed it in {self._ticket()} and linked the dashboard.",
            f"`{self._ident()}` was called {self._num()} times per request, which explains the "
            f"{symptom}.",
            f"Do not {r.choice(VERBS)} {service} during the backup window; {r.choice(REASONS)}.",
            f"The fix is in {service} {self._version()}, so pin at least that version.",
            f"If it comes back, {r.choice(VERBS)} the {component} first and compare with "
            f"{self._host()}.",
            f"Tried {zipf_pick(r, ACTIONS)} the {zipf_pick(r, COMPONENTS)} as well; it made "
            f"no difference.",
            f"This only affects {zipf_pick(r, ENVS)}; {zipf_pick(r, ENVS)} runs a different "
            f"{setting}.",
            f"Logs showed `{symptom}` from `{self._ident()}` every {self._num()} seconds.",
            f"Open question: should {zipf_pick(r, PROJECTS)} own the {component}?",
        )
        return r.choice(forms)

    def _host(self) -> str:
        return zipf_pick(self.rng, self.hosts)

    def _ident(self) -> str:
        return zipf_pick(self.rng, self.idents)

    def _time(self) -> str:
        return f"{self.rng.randint(0, 23):02d}:{self.rng.choice((0, 15, 30, 45)):02d} UTC"

    def _extra_block(self, topic: tuple[str, str, str]) -> str:
        """A command block or a short list, as notes often have."""
        r = self.rng
        if r.random() < 0.5:
            lines = [f"{r.choice(VERBS)} {topic[0]} --{zipf_pick(r, SETTINGS).split()[0]}"]
            lines += [f"{self._ident()} --env {zipf_pick(r, ENVS)}" for _ in range(r.randint(1, 3))]
            return "```\n" + "\n".join(lines) + "\n```"
        items = [f"- {r.choice(VERBS)} {self._host()} {r.choice(FILLER)}" for _ in range(3)]
        return "\n".join(items)

    # ------------------------------------------------------------------ bodies
    def body_size(self) -> int:
        """Bytes for one body: log-normal around 1 KB, kept within 0.3-3 KB."""
        return max(300, min(3000, int(self.rng.lognormvariate(math.log(950), 0.55))))

    def body(self, topic: tuple[str, str, str], size: int | None = None) -> str:
        """Paragraphs of sentences about `topic`, about `size` bytes (never a `## ` line)."""
        r = self.rng
        target = size if size is not None else self.body_size()
        paragraphs: list[str] = []
        current: list[str] = []
        length = 0
        while length < target:
            if current and r.random() < 0.25:
                paragraphs.append(" ".join(current))
                current = []
                if r.random() < 0.2:
                    block = self._extra_block(topic)
                    paragraphs.append(block)
                    length += len(block) + 2
                    continue
            s = self.sentence(topic)
            current.append(s)
            length += len(s) + 1
        if current:
            paragraphs.append(" ".join(current))
        return "\n\n".join(paragraphs)

    def short(self, topic: tuple[str, str, str]) -> str:
        """A one-line context string (relations, events)."""
        return self.sentence(topic).rstrip(".").replace('"', "'")
