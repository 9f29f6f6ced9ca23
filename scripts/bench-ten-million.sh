# The `--ten-million` section of scripts/bench.sh (issue 68), sourced by it: it uses the script's $bin, $livecast,
# $work, $configuration, pids, median, field, h2load_rate and the nginx sink ($nginx_port, its certificate).
#
# One PostgreSQL primary (a throwaway `livecast postgres`), provisioned through the CLI; 10,000,000 token followers of
# one feed imported through `POST …/activities:import` (NDJSON batches of 10,000 rows, two at a time, as a server takes
# two imports per app), then 1,000,000 push-to-start tokens through `POST …/push-to-start-tokens:import`; the rows a
# second of each million; PostgreSQL's table and index sizes. Then one feed update fanned out to every follower by one
# `livecast serve` and by three, pushing to nginx's `return 200` (the fan-out sink), next to h2load sending pushes to
# the same sink with as many connections: wall time from the 202 to the sink's last count, pushes a second, the ratio,
# each instance's peak resident memory, and pushes lost (the sink's count and the update's own counts against the
# audience). The first update after the import and the next (one instance each) are timed the same way. Then the
# operator's paths at that size: a reaper pass (`livecast reap`), `GET /v1/apps/{bundleId}`, an activity's record, a
# page of deliveries and of the event feed, and the console's app page (signed in), each timed with curl.
# TEN_MILLION_FOLLOWERS and TEN_MILLION_STARTS change the sizes (a quick try: 200000 and 20000).

tm_followers=${TEN_MILLION_FOLLOWERS:-10000000} tm_starts=${TEN_MILLION_STARTS:-1000000}
tm_batch=10000 tm_block=$((tm_followers >= 1000000 ? 1000000 : tm_followers)) tm_connections=2
tm_bundle=com.example.final tm_feed=national-final
tm=$work/ten-million
mkdir -p "$tm"

# nginx counts every request it answers: one byte and a newline a request in its access log, so the log's size is
# twice the count.
tm_sink_count() { echo $(($(stat -c %s "$work/nginx/count.log") / 2)); }

"$livecast" postgres >"$tm/postgres.out" 2>"$tm/postgres.err" &
pids+=($!)
for _ in $(seq 600); do grep -q '^postgres://' "$tm/postgres.out" 2>/dev/null && break; sleep 0.1; done
tm_url=$(head -1 "$tm/postgres.out")
[[ $tm_url == postgres://* ]] || { echo "scripts/bench.sh: livecast postgres did not start:" >&2; cat "$tm/postgres.err" >&2; exit 1; }
export LIVECAST_MASTER_KEY_FILE="$tm/master.key"
head -c 32 /dev/urandom | base64 >"$LIVECAST_MASTER_KEY_FILE"
DATABASE_URL=$tm_url "$livecast" migrate >&2
DATABASE_URL=$tm_url "$livecast" apps add --bundle-id "$tm_bundle" --environment sandbox --team-id BENCHTEAM1 \
    --key-id BENCHKEY01 --key-file "$work/key.p8" >&2
tm_key=$(DATABASE_URL=$tm_url "$livecast" keys create --bundle-id "$tm_bundle" --role admin | tail -1)
tm_psql() { psql -X -q -At "$tm_url" -c "$1"; }

declare -A tm_port tm_pid
tm_serve() { # INSTANCE APNS_CONNECTIONS: starts `livecast serve` number INSTANCE, pushing to the nginx sink
    local out=$tm/serve-$1.out
    rm -f "$out"
    "$livecast" serve --database-url "$tm_url" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
        --rate-limit 1000000000 --rate-burst 1000000000 --reap-interval 0 --http-idle-timeout 86400 \
        --apns-push-url "https://localhost:$nginx_port" --apns-management-url "https://localhost:$nginx_port" \
        --apns-ca-file "$work/nghttpd-cert.pem" --apns-connections "$2" >"$out" 2>"$tm/serve-$1.err" &
    tm_pid[$1]=$!
    echo "${tm_pid[$1]}" >"$tm/serve-$1.pid"
    for _ in $(seq 600); do grep -q '^listening on ' "$out" 2>/dev/null && break; sleep 0.05; done
    tm_port[$1]=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$out")
    [[ -n ${tm_port[$1]} ]] || { echo "scripts/bench.sh: serve $1 did not start:" >&2; tail -20 "$tm/serve-$1.err" >&2; exit 1; }
}
tm_stop() { # INSTANCE: a graceful stop; prints its peak resident memory in MiB
    local peak
    peak=$(awk '/^VmHWM:/ { printf "%d", $2 / 1024 }' "/proc/${tm_pid[$1]}/status" 2>/dev/null || echo "?")
    kill "${tm_pid[$1]}" 2>/dev/null || true
    while kill -0 "${tm_pid[$1]}" 2>/dev/null; do sleep 0.05; done
    rm -f "$tm/serve-$1.pid"
    echo "$peak"
}
tm_curl() { # METHOD PATH [CURL OPTIONS...] -> the body, to instance 0
    curl -sS --fail-with-body -X "$1" -H "authorization: Bearer $tm_key" "http://127.0.0.1:${tm_port[0]}/v1/apps/$tm_bundle$2" "${@:3}"
}

# Rows of the imports: follower N is activity `f-N` of the feed, its update token `a0` and N in 62 hex digits; device
# N's push-to-start token is `b0` and N likewise.
tm_rows() { # KIND FIRST COUNT -> NDJSON rows
    awk -v kind="$1" -v first="$2" -v count="$3" -v feed="$tm_feed" 'BEGIN {
        for (i = first; i < first + count; i++) {
            if (kind == "activities")
                printf "{\"activityId\":\"f-%d\",\"attributesType\":\"GameAttributes\",\"pushToken\":\"a0%062x\",\"feed\":\"%s\"}\n", i, i, feed
            else
                printf "{\"deviceId\":\"d-%d\",\"attributesType\":\"GameAttributes\",\"token\":\"b0%062x\",\"userId\":\"u-%d\",\"osVersion\":\"17.5\",\"frequentUpdatesEnabled\":true}\n", i, i, i
        }
    }'
}
tm_import_worker() { # KIND ROUTE FIRST END WORKER: every second batch of [FIRST, END), from the worker's own
    local kind=$1 route=$2 first=$3 end=$4 worker=$5 answer
    for ((start = first + worker * tm_batch; start < end; start += 2 * tm_batch)); do
        tm_rows "$kind" "$start" "$((end - start < tm_batch ? end - start : tm_batch))" >"$tm/rows-$worker.ndjson"
        # A batch answered 503 (the database busy) is sent again, as the answer asks: an import is idempotent.
        for try in 1 2 3 4 5; do
            answer=$(tm_curl POST "$route" -H 'content-type: application/x-ndjson' --data-binary "@$tm/rows-$worker.ndjson") && break
            [[ $answer == *database_unavailable* && $try -lt 5 ]] ||
                { echo "scripts/bench.sh: an import batch failed: ${answer:0:300}" >&2; return 1; }
            echo "scripts/bench.sh: an import batch was answered 503 (try $try); sending it again" >&2
            sleep 2
        done
        [[ $answer == *'"failed":0'* ]] || { echo "scripts/bench.sh: an import batch refused rows: ${answer:0:300}" >&2; return 1; }
    done
}
tm_import() { # KIND ROUTE TOTAL LABEL: imports TOTAL rows a block at a time; prints each block's rows a second
    local kind=$1 route=$2 total=$3 label=$4 started block_started rates=() first
    started=$(date +%s.%N)
    for ((first = 0; first < total; first += tm_block)); do
        block_started=$(date +%s.%N)
        local end=$((first + tm_block < total ? first + tm_block : total))
        tm_import_worker "$kind" "$route" "$first" "$end" 0 &
        local w0=$!
        tm_import_worker "$kind" "$route" "$first" "$end" 1 || { wait "$w0"; exit 1; }
        wait "$w0" || exit 1
        rates+=("$(awk -v n="$((end - first))" -v s="$block_started" -v e="$(date +%s.%N)" 'BEGIN { printf "%d", n / (e - s) }')")
    done
    awk -v n="$total" -v s="$started" -v e="$(date +%s.%N)" -v l="$label" -v r="${rates[*]}" \
        'BEGIN { printf "  %-44s %10d rows in %6.1f s: %6d rows/s; each million: %s\n", l, n, e - s, n / (e - s), r }'
}

tm_serve 0 "$tm_connections"
tm_curl PUT "/feeds/$tm_feed" -H 'content-type: application/json' \
    --data '{"attributesType":"GameAttributes","attributes":{"home":"Home","away":"Away"}}' >/dev/null
echo "Ten million followers on one PostgreSQL primary ($configuration build; imports through the API, fan-outs to nginx's return 200)"
tm_import activities /activities:import "$tm_followers" "followers, POST …/activities:import"
tm_import push-to-start /push-to-start-tokens:import "$tm_starts" "push-to-start tokens, POST …/push-to-start-tokens:import"
echo "  PostgreSQL, the largest tables (table / its indexes):"
tm_psql "SELECT format('    %-28s %9s / %9s', relname, pg_size_pretty(pg_table_size(oid)), pg_size_pretty(pg_indexes_size(oid)))
    FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace
    ORDER BY pg_total_relation_size(oid) DESC LIMIT 6"
echo "    database                     $(tm_psql "SELECT pg_size_pretty(pg_database_size(current_database()))")"
tm_stop 0 >/dev/null

tm_h2load=()
tm_fanout() { # INSTANCES LABEL: one update of the feed through INSTANCES servers; prints its row
    local instances=$1 label=$2 before posted answer update_id last count=0 previous=-1 last_change peaks=() i h2load
    for ((i = 0; i < instances; i++)); do tm_serve "$i" "$tm_connections"; done
    before=$(tm_sink_count)
    posted=$(date +%s.%N)
    answer=$(tm_curl POST "/feeds/$tm_feed/updates" -H 'content-type: application/json' \
        --data "{\"contentState\":{\"homeScore\":$((RANDOM % 9)),\"awayScore\":$((RANDOM % 9)),\"run\":\"$label\"}}")
    update_id=$(sed -n 's/.*"updateId":\([0-9]*\).*/\1/p' <<<"$answer")
    [[ -n $update_id ]] || { echo "scripts/bench.sh: the update was refused: $answer" >&2; exit 1; }
    tm_last_update=$update_id
    last_change=$posted
    # Until every follower was pushed (or the sink has counted nothing new for 30 s).
    while ((count < tm_followers)); do
        sleep 0.05
        count=$(($(tm_sink_count) - before))
        if ((count != previous)); then previous=$count last_change=$(date +%s.%N); fi
        if awk -v l="$last_change" -v n="$(date +%s.%N)" 'BEGIN { exit !(n - l > 30) }'; then break; fi
    done
    last=$last_change
    local status
    status=$(tm_curl GET "/updates/$update_id" 2>/dev/null || echo "{}")
    for ((i = 0; i < instances; i++)); do peaks+=("$(tm_stop "$i")"); done
    # The sink counted what arrived within 30 s of the last; anything later would be counted by the next run.
    sleep 1
    count=$(($(tm_sink_count) - before))
    local connections=$((instances * tm_connections))
    if [[ -z ${tm_h2load[$connections]:-} ]]; then
        requests=$((tm_followers < 2000000 ? tm_followers : 2000000))
        local h2load_before
        h2load_before=$(tm_sink_count)
        tm_h2load[$connections]=$(h2load_rate "https://127.0.0.1:$nginx_port/3/device/$token" "$connections")
        while (($(tm_sink_count) - h2load_before < requests)); do sleep 0.1; done
    fi
    h2load=${tm_h2load[$connections]}
    awk -v l="$label" -v i="$instances" -v c="$connections" -v s="$(awk -v a="$posted" -v b="$last" 'BEGIN { print b - a }')" \
        -v n="$count" -v f="$tm_followers" -v h="$h2load" -v p="${peaks[*]}" \
        'BEGIN { printf "  %-22s %9d %11d %9.1f %10d %10d %7.2f  %-12s %6d\n", l, i, c, s, n / s, h, (n / s) / h, p, f - (n < f ? n : f) }'
    tm_last_status=$status tm_last_count=$count
    [[ $count -ge $tm_followers ]] || { echo "scripts/bench.sh: the sink counted $count of $tm_followers pushes ($label)" >&2; exit 1; }
    [[ $count -eq $tm_followers ]] || echo "  ($label: the sink counted $((count - tm_followers)) pushes more than the followers: re-sends)"
}
tm_targets() { # the last update's own counts of its targets (GET …/updates/{updateId})
    echo "    its targets: $(sed -n 's/.*"targets":\({[^{}]*\({[^{}]*}\)\{0,1\}[^{}]*}\).*/\1/p' <<<"$tm_last_status")"
}
echo "  One update to every follower (APNs connections: $tm_connections per instance; h2load: as many connections, 100 streams each)"
printf '  %-22s %9s %11s %9s %10s %10s %7s  %-12s %6s\n' run instances connections "wall s" pushes/s h2load/s ratio "peak MiB" lost
tm_fanout 1 "first after the import"
tm_targets
tm_fanout 1 "the next, one instance"
tm_fanout 3 "three instances"
tm_targets

# The operator's paths at this size, each timed from outside (curl's total time), on one instance.
tm_serve 0 "$tm_connections"
tm_time() { # LABEL METHOD PATH: prints the status and seconds of one request
    local result
    result=$(curl -sS -o "$tm/path.out" -w '%{http_code} %{time_total}' -X "$2" -H "authorization: Bearer $tm_key" \
        "http://127.0.0.1:${tm_port[0]}$3")
    awk -v l="$1" -v r="$result" 'BEGIN { split(r, f, " "); printf "  %-44s %6.3f s (HTTP %s)%s\n", l, f[2], f[1], (f[2] > 1 ? "  over 1 s" : "") }'
}
echo "  The operator's paths at this size (one request each, after one to warm the connection; target: <= 1 s)"
reap_started=$(date +%s.%N)
reap_line=$(DATABASE_URL=$tm_url "$livecast" reap --apns-push-url "https://localhost:$nginx_port" \
    --apns-management-url "https://localhost:$nginx_port" --apns-ca-file "$work/nghttpd-cert.pem" 2>"$tm/reap.err" | tail -1) ||
    { echo "scripts/bench.sh: livecast reap failed:" >&2; cat "$tm/reap.err" >&2; exit 1; }
awk -v s="$reap_started" -v e="$(date +%s.%N)" -v r="$reap_line" 'BEGIN { printf "  %-44s %6.3f s (%s)\n", "a reaper pass (livecast reap)", e - s, r }'
tm_time "warm-up: GET /v1/key" GET /v1/key >/dev/null
tm_time "GET /v1/apps/{bundleId}" GET "/v1/apps/$tm_bundle"
tm_time "GET …/overview" GET "/v1/apps/$tm_bundle/overview"
tm_time "an activity's record: GET …/activities/f-N" GET "/v1/apps/$tm_bundle/activities/f-$((tm_followers / 2))"
tm_time "a page of deliveries: GET …/deliveries" GET "/v1/apps/$tm_bundle/deliveries"
tm_time "a page of an update's pushes: …?updateId=" GET "/v1/apps/$tm_bundle/deliveries?updateId=$tm_last_update&limit=1000"
tm_time "a page of the event feed: GET …/events" GET "/v1/apps/$tm_bundle/events"
tm_time "a page of the feed's updates" GET "/v1/apps/$tm_bundle/feeds/$tm_feed/updates"
# The console: sign in with the key (the form's CSRF cookie first), then its app page.
curl -sS -c "$tm/jar" -b "$tm/jar" -o "$tm/login.html" "http://127.0.0.1:${tm_port[0]}/console/login"
csrf=$(sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' "$tm/login.html" | head -1)
curl -sS -c "$tm/jar" -b "$tm/jar" -o /dev/null --data-urlencode "csrf=$csrf" --data-urlencode "key=$tm_key" \
    --data-urlencode "next=/console" "http://127.0.0.1:${tm_port[0]}/console/login"
console=$(curl -sS -b "$tm/jar" -o "$tm/console.html" -w '%{http_code} %{time_total}' "http://127.0.0.1:${tm_port[0]}/console")
awk -v r="$console" 'BEGIN { split(r, f, " "); printf "  %-44s %6.3f s (HTTP %s)%s\n", "the console'"'"'s app page: GET /console", f[2], f[1], (f[2] > 1 ? "  over 1 s" : "") }'
tm_stop 0 >/dev/null
