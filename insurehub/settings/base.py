"""Settings shared by every environment; every environment variable is read here.

Defaults are the embedded setup (SQLite, django-q2's ORM broker) so that a fresh machine
runs the product with no server to install. Scale-out sets DATABASE_URL and REDIS_URL.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def var_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("INSUREHUB_VAR_DIR", BASE_DIR / "var"))


VAR_DIR = var_dir(os.environ)


def env_bool(name: str, default: bool = False, env: Mapping[str, str] = os.environ) -> bool:
    value = env.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int, env: Mapping[str, str] = os.environ) -> int:
    value = env.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from exc


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = [h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1").split(",") if h]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "django_q",
    # Only for its system checks: they flag settings left in django-csp's pre-4.0 format.
    "csp",
    "agencies",
    "integrations",
    # Durable work: the record, its try loop, the pump, dead letters, replay and the schedules;
    # each desk app registers its kinds of work and schedules here in its AppConfig.ready().
    "work",
    "vehicles",
    "quotes",
    "sync",
    "customers",
    "documents",
    "notifications",
    "policies",
    # Listens to issuance and cancellation; no desk app imports it (a layer of its own).
    "commissions",
    # Sends the customer their offer and renewal reminders, on the channels they consented to;
    # listens to policies' reminders, adds sections to the customer and quote request pages.
    "outreach",
    # The operator console reads every app above: it comes last (the top layer, docs/architecture.md).
    "console",
]

MIDDLEWARE = [
    # /healthz and /readyz answered before host checks and the HTTPS redirect (console.probes).
    "console.probes.ProbeMiddleware",
    # Count and latency by view for /metrics (console.http_metrics): around everything below.
    "console.http_metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every response (CONTENT_SECURITY_POLICY below).
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Every log line of the request names it and the user's agency (insurehub.log_context).
    "insurehub.log_context.RequestContextMiddleware",
    # Audit entries name the request's user (integrations.audit); "system" outside a request.
    "integrations.audit.AuditActorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

# --- Content-Security-Policy ------------------------------------------------------------------
# Every page, the desk's, the admin's and the API docs', runs scripts and styles only from our own
# static files: no inline <script>, no on…= handler, no <style> or style="…", no eval. Markup that
# slips into a page (an insurer's coverage name, a crafted link) is then shown, never run. Static
# files stay same-origin in production too (WhiteNoise), so 'self' is the whole list.
#
# django-csp (Mozilla's, maintained) rather than a middleware of ours: it sets the header on
# every response, error pages included, and has per-view decorators (`csp_update`) should one page
# ever need a source more; Django 6.0's own CSP support takes the same shape (a dict of directives),
# so moving there later is small. No nonce: nothing needs one, and a fresh nonce per response would
# only make pages differ byte for byte.
#
# img-src data: is for the small SVG icons Swagger UI's stylesheet carries inline. frame-ancestors
# says in CSP what X-Frame-Options: DENY says to older browsers.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        # Browsers report each refusal here (console/csp_reports.py): logged and counted.
        "report-uri": "/csp-rapor/",
    },
}

ROOT_URLCONF = "insurehub.urls"
WSGI_APPLICATION = "insurehub.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "notifications.context.unread_count",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
# SQLite is tuned for several worker processes sharing one file: WAL lets readers run beside
# the writer, IMMEDIATE transactions take the write lock up front (no deadlock-prone lock
# upgrades), and a generous timeout waits instead of failing with "database is locked".
# Every SQLite database gets it, the embedded default and a `DATABASE_URL=sqlite:///…` alike.
SQLITE_OPTIONS = {
    "timeout": 30,
    "transaction_mode": "IMMEDIATE",
    "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;PRAGMA busy_timeout=30000;",
}


def sqlite_tuned(database: dict) -> dict:
    """`database` with the multi-process tuning if it is SQLite; options it states itself win."""
    if database.get("ENGINE") != "django.db.backends.sqlite3":
        return database
    return {**database, "OPTIONS": {**SQLITE_OPTIONS, **database.get("OPTIONS", {})}}


def database_from_url(url: str, env: Mapping[str, str] = os.environ) -> dict:
    """A database from its URL. PostgreSQL gets Django's psycopg pool (per process; see
    `insurehub.dbpool` for why it is fork- and wait-safe here); `DB_POOL=0` falls back to
    persistent connections. Mind the sum over processes and machines: processes × DB_POOL_MAX_SIZE
    must stay under the server's max_connections."""
    database = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    if database["ENGINE"] == "django.db.backends.postgresql" and env_bool("DB_POOL", True, env):
        database["CONN_MAX_AGE"] = 0  # the pool keeps the connections; Django must not
        database.setdefault("OPTIONS", {})["pool"] = {
            "min_size": env_int("DB_POOL_MIN_SIZE", 1, env),
            "max_size": env_int("DB_POOL_MAX_SIZE", 10, env),
            "timeout": env_int("DB_POOL_TIMEOUT", 10, env),
        }
    return sqlite_tuned(dict(database))  # dj-database-url's TypedDict, as the plain dict Django reads


def databases_from_env(env: Mapping[str, str]) -> dict:
    """DATABASES for this environment, with no side effect, so a test can check any setup."""
    url = env.get("DATABASE_URL", "")
    if url:
        return {"default": database_from_url(url, env)}
    # Connections kept for a minute, as dj-database-url gives a `sqlite:///…` URL: reopening one
    # (pragmas, Django's functions) on every broker poll and every quote call costs ~2 ms of CPU.
    embedded = {"ENGINE": "django.db.backends.sqlite3", "NAME": var_dir(env) / "insurehub.sqlite3", "CONN_MAX_AGE": 60}
    return {"default": sqlite_tuned(embedded)}


if not os.environ.get("DATABASE_URL"):
    VAR_DIR.mkdir(parents=True, exist_ok=True)
DATABASES = databases_from_env(os.environ)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "tr"
# Every string the users read is Turkish; offering English would only switch Django's own strings
# (admin, form errors) for browsers that prefer it, and leave a page in two languages.
LANGUAGES = [("tr", "Türkçe")]
TIME_ZONE = "Europe/Istanbul"
USE_I18N = True
USE_TZ = True

# --- E-mail (notifications) ------------------------------------------------------------------
# Console by default (the embedded demo prints mails); SMTP as soon as a host is configured.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "InsureHub <bildirim@insurehub.local>")
# --- Messages to customers (outreach: the offer, renewal reminders) --------------------------------
# The SMS backend (a dotted path, like EMAIL_BACKEND): the console one logs, Netgsm's sends.
SMS_BACKEND = os.environ.get("SMS_BACKEND", "outreach.sms.console.ConsoleBackend")
NETGSM_API_URL = os.environ.get("NETGSM_API_URL", "https://api.netgsm.com.tr/sms/send/get")
NETGSM_USERCODE = os.environ.get("NETGSM_USERCODE", "")
NETGSM_PASSWORD = os.environ.get("NETGSM_PASSWORD", "")
# The sender name (mesaj başlığı) Netgsm approved for the agency.
NETGSM_MSGHEADER = os.environ.get("NETGSM_MSGHEADER", "")
SMS_CONNECT_TIMEOUT = env_int("SMS_CONNECT_TIMEOUT", 5)
SMS_READ_TIMEOUT = env_int("SMS_READ_TIMEOUT", 10)
# How long the offer link sent by SMS opens the offer (days): past it, the page says it expired.
OFFER_LINK_MAX_AGE_DAYS = env_int("OFFER_LINK_MAX_AGE_DAYS", 7)
# The confirm step pre-fills this card token (the sandbox accepts it): the demo settings only.
DEMO_PAYMENT_TOKEN = ""
# Where links in e-mails point (the desk's public address). Required in production (production.py):
# a missing one would send agents links to 127.0.0.1. The local and test settings default it.
SITE_URL = os.environ.get("SITE_URL", "").strip()
# Which kind of machine this is: "production" refuses the developer settings (local.py, manage.py).
INSUREHUB_ENV = os.environ.get("INSUREHUB_ENV", "").strip().lower()

STATIC_URL = "static/"
# Site-wide assets that belong to no app (the favicon).
STATICFILES_DIRS = [BASE_DIR / "static"]
# `collectstatic` gathers here (scripts/serve.sh); WhiteNoise serves it in production.
STATIC_ROOT = VAR_DIR / "static"

# --- Stored files: policy documents (documents app) -----------------------------------------
# Policy PDFs go through Django's storage API (`default_storage`, documents.services): local disk
# under MEDIA_ROOT by default, an S3-compatible store (AWS S3, MinIO, Ceph) when
# DOCUMENT_STORAGE_BUCKET is set. Nothing is ever served from MEDIA_URL (no route, private
# objects): the files are read only by the views that check the policy's agency first.
MEDIA_ROOT = Path(os.environ.get("INSUREHUB_MEDIA_ROOT", "") or VAR_DIR / "media")
MEDIA_URL = "media/"


def default_file_storage(env: Mapping[str, str]) -> dict:
    """STORAGES["default"] from the environment. S3 options left unset fall to boto3's own
    lookup (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, an instance role)."""
    bucket = env.get("DOCUMENT_STORAGE_BUCKET", "").strip()
    if not bucket:
        return {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    options = {
        "bucket_name": bucket,
        "location": env.get("DOCUMENT_STORAGE_PREFIX", "").strip("/"),
        # A second file of the same name (a re-fetch) gets its own key: the previous PDF stays
        # readable until the record points at the new one.
        "file_overwrite": False,
        "default_acl": "private",
        "querystring_auth": True,
    }
    for option, name in (
        ("endpoint_url", "AWS_S3_ENDPOINT_URL"),
        ("region_name", "AWS_S3_REGION_NAME"),
        ("access_key", "AWS_ACCESS_KEY_ID"),
        ("secret_key", "AWS_SECRET_ACCESS_KEY"),
        ("addressing_style", "AWS_S3_ADDRESSING_STYLE"),  # "path" for most MinIO setups
    ):
        if env.get(name, "").strip():
            options[option] = env[name].strip()
    return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}


STORAGES = {
    "default": default_file_storage(os.environ),
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# --- end of stored files ---------------------------------------------------------------------

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"
# Reverse proxies in front of the app that append to X-Forwarded-For (agencies.auth); 0: none, the
# header is ignored. Behind a proxy it must be set, or every caller shares the proxy's lock-out.
LOGIN_TRUSTED_PROXY_COUNT = env_int("LOGIN_TRUSTED_PROXY_COUNT", 0)
# ModelBackend plus one rule: agents of a deactivated agency cannot log in, and their sessions end.
AUTHENTICATION_BACKENDS = ["agencies.backends.ActiveAgencyModelBackend"]

REST_FRAMEWORK = {
    # JSON only: DRF's browsable HTML pages carry inline styles the Content-Security-Policy refuses,
    # and Swagger UI at /api/docs/ is where calls are tried by hand.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous API call then answers 401 with WWW-Authenticate.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "agencies.permissions.AgencyIsActive",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # A body that is not JSON is refused in Turkish (insurehub.api_input); forms as DRF reads them.
    "DEFAULT_PARSER_CLASSES": [
        "insurehub.api_input.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # Application errors (insurehub.errors) and DoesNotExist answered in one place, not per view.
    "EXCEPTION_HANDLER": "insurehub.api_errors.exception_handler",
    # Quote requests fan out to every insurer: per user and per agency (quotes/api/throttles.py).
    # Counted in the default cache, which is shared by every process (CACHES below: Redis or a table).
    "DEFAULT_THROTTLE_RATES": {
        "quote_create_user": os.environ.get("API_QUOTE_RATE_PER_USER", "30/min"),
        "quote_create_agency": os.environ.get("API_QUOTE_RATE_PER_AGENCY", "300/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "InsureHub API",
    "DESCRIPTION": "Quote requests to every insurer at once, per-insurer results, issuance and policies.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI from the installed sidecar package: the docs page works with no internet access.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Durable records (issuances, cancellations) share one state machine: one enum in the schema.
    "ENUM_NAME_OVERRIDES": {"WorkStateEnum": "work.item.WorkState.choices"},
    # Request bodies take their declared fields only (insurehub.api_input): the schema says so.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "insurehub.api_input.request_bodies_closed",
    ],
}

# --- Cache: counters every process must share ----------------------------------------------
# What the cache counts must hold across web processes and machines: the API's throttles
# ("300/min per agency", quotes/api/throttles.py), the open live-results streams per user and per
# session (quotes/live.py), the work pump's last pass (readyz). So never a per-process memory
# cache: Redis when REDIS_URL is set, else a table in the database every process already shares
# (`manage.py createcachetable`, run by scripts/run.sh and scripts/serve.sh).
CACHE_TABLE = "insurehub_cache"


def caches_from_env(env: Mapping[str, str]) -> dict:
    """CACHES for this environment, with no side effect, so a test can check any setup."""
    url = env.get("REDIS_URL", "")
    if url:
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": url,
                "KEY_PREFIX": "insurehub",
                # A Redis that is down must answer a page quickly, not hold its thread.
                "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
            }
        }
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": CACHE_TABLE,
            "KEY_PREFIX": "insurehub",
            # Django culls a third of the table past MAX_ENTRIES: that would forget throttle windows
            # and open streams at random. Entries expire by themselves (minutes at most).
            "OPTIONS": {"MAX_ENTRIES": 100_000, "CULL_FREQUENCY": 10},
        }
    }


CACHES = caches_from_env(os.environ)

# Open live-results streams (quotes/live.py): each holds a server thread for up to 45 s, so one
# agent may hold only a few; past them the page polls every second instead.
QUOTE_LIVE_STREAMS_PER_USER = env_int("QUOTE_LIVE_STREAMS_PER_USER", 6)
QUOTE_LIVE_STREAMS_PER_SESSION = env_int("QUOTE_LIVE_STREAMS_PER_SESSION", 3)

# How a change reaches the live streams of every web process (insurehub/change_feed.py): "auto"
# pushes through Redis when REDIS_URL is set, else through PostgreSQL's LISTEN/NOTIFY, else (the
# embedded SQLite) each process's watcher looks every 25 ms; "redis", "postgres" or "off" force it.
CHANGE_FEED = os.environ.get("CHANGE_FEED", "auto")

# --- Background work (django-q2) ------------------------------------------------------
# django-q2 re-delivers a task that outlives `retry` seconds and by default retries forever.
# Insurer retries belong to the integration layer (tenacity + durable records), never to the
# queue: `timeout` < `retry`, and `max_attempts` 1 so a re-delivery never becomes a second
# insurer call behind the retry policy's back.
REDIS_URL = os.environ.get("REDIS_URL", "")

Q_CLUSTER: dict[str, Any] = {
    "name": "insurehub",
    # I/O-bound work, and the pump holds one worker ~50 s a minute: more workers than cores.
    "workers": env_int("Q_WORKERS", 4),
    "timeout": env_int("Q_TIMEOUT", 120),
    "retry": env_int("Q_RETRY", 180),
    "max_attempts": 1,
    "ack_failures": True,
    "save_limit": 500,
    "catch_up": False,
    "orm": "default",
    # How often an idle cluster asks the ORM broker for work: the quote desk waits on this (half
    # of it on average). An idle poll on a kept SQLite connection costs ~0.5 ms of CPU: 50 a second
    # are ~2 % of a core. The Redis broker blocks on its list instead and does not poll.
    "poll": 0.02,
    # Lets `Q_CLUSTER_NAME=<queue> manage.py qcluster` serve a queue of its own with this same
    # configuration (django-q2 requires the key for that); tests use it to keep clusters apart.
    "ALT_CLUSTERS": {},
    # The admin's name for django-q2's tables (its queue, schedules, task results).
    "label": "Arka plan işleri",
}
if REDIS_URL:
    Q_CLUSTER.pop("orm")
    Q_CLUSTER["redis"] = REDIS_URL
if Q_CLUSTER["timeout"] >= Q_CLUSTER["retry"]:
    raise ImproperlyConfigured("Q_TIMEOUT must be lower than Q_RETRY, or django-q2 re-delivers running tasks")

# /readyz calls the work pump silent when its last good pass is older than this (it runs every
# minute, a pass a second for ~50 s): three periods, so one slow start is not an alarm.
WORK_PUMP_STALE_SECONDS = env_int("WORK_PUMP_STALE_SECONDS", 180)

# --- Integrations ---------------------------------------------------------------------
# Seconds to wait for an insurer to accept a connection. The read timeout comes from each
# operation's policy, because a trafik quote and a nightly sync can afford different waits.
INSURER_CONNECT_TIMEOUT = float(os.environ.get("INSURER_CONNECT_TIMEOUT", "3.05"))
# The insurer hosts the platform may send agencies' credentials to (integrations.insurer_hosts),
# comma-separated: exact names, or ".anka.com.tr" for a domain and its subdomains. Checked where an
# insurer's address is saved and on every call. Empty outside DEBUG: no insurer can be called
# (`manage.py check --deploy` warns). Private, link-local and loopback addresses are refused outside
# DEBUG whatever the list says; loopback (the sandbox) only with INSURER_ALLOW_LOOPBACK.
INSURER_ALLOWED_HOSTS = [h.strip() for h in os.environ.get("INSURER_ALLOWED_HOSTS", "").split(",") if h.strip()]
INSURER_ALLOW_LOOPBACK = env_bool("INSURER_ALLOW_LOOPBACK", False)

# Retention (`manage.py prune_history`, nightly): raw attempt rows, their per-minute sums (older
# ones are folded into all-time totals, never dropped from /metrics' counters), retry-budget
# buckets, and SUBMITTED sync items of finished runs (dead letters and open items are kept).
ATTEMPT_RETENTION_DAYS = env_int("ATTEMPT_RETENTION_DAYS", 30)
AGGREGATE_RETENTION_DAYS = env_int("AGGREGATE_RETENTION_DAYS", 400)
BUDGET_BUCKET_RETENTION_MINUTES = env_int("BUDGET_BUCKET_RETENTION_MINUTES", 60)
SYNC_ITEM_RETENTION_DAYS = env_int("SYNC_ITEM_RETENTION_DAYS", 90)
# Failed-login counters and lock-outs (a username, an address: personal data) kept this long.
LOGIN_HISTORY_RETENTION_DAYS = env_int("LOGIN_HISTORY_RETENTION_DAYS", 90)

# `LOG_FORMAT=json`: one JSON object a line (request id, agency, insurer, operation, record id;
# identity numbers masked, e-mails and phones dropped: integrations.log_json), for a log store.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "plain").strip().lower()
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be 'plain' or 'json', got {LOG_FORMAT!r}")
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "integrations.log_json.JsonFormatter"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT},
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "urllib3": {"level": "WARNING"},
    },
}
CREDENTIALS_KEY = os.environ.get("INSUREHUB_CREDENTIALS_KEY", "")
# Bearer token for Prometheus to scrape /metrics; empty means staff sessions only.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")

# Error reports (integrations.error_reports): off unless a DSN is given; personal data scrubbed.
SENTRY_DSN = os.environ.get("SENTRY_DSN", "")
SENTRY_ENVIRONMENT = os.environ.get("SENTRY_ENVIRONMENT", "") or INSUREHUB_ENV
SENTRY_RELEASE = os.environ.get("SENTRY_RELEASE", "")
try:
    SENTRY_TRACES_SAMPLE_RATE = float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", "0") or 0)
except ValueError as exc:
    raise ImproperlyConfigured("SENTRY_TRACES_SAMPLE_RATE must be a number between 0 and 1") from exc
