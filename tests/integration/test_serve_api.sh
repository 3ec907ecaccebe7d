#!/usr/bin/env bash
# newscls serve on a free loopback port with a tiny fasttext bundle: every endpoint, the
# results equal `newscls predict` byte for byte (one request, requests split over several
# batches, and concurrent single-title requests gathered into one batch), every error code,
# the limits, a full queue (503), the access log and /metrics. Connection handling (slow,
# endless, pipelined and smuggled requests) is test_serve_connections.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
source "$(dirname "$0")/serve_lib.sh"
dir=$(scratch)
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
# shellcheck disable=SC2046
train_tiny fasttext "$dir/news" $(tiny_settings fasttext)
cut -f1 "$tiny/test.txt" >"$dir/titles.txt"
"$NEWSCLS_BIN" predict --model-dir "$dir/news" --input "$dir/titles.txt" --output "$dir/predict.jsonl" --top-k 2
titles_json=$(python3 -c "import json,sys; print(json.dumps(open(sys.argv[1],encoding='utf-8').read().splitlines(), ensure_ascii=False))" "$dir/titles.txt")

start_server "$dir/server.log" --model-dir "$dir/news/" --max-batch 4 --max-wait-ms 300 \
  --max-titles 50 --max-body-bytes 4096 --threads 1

# --- endpoints ---
call 200 "$dir/health.json" GET /healthz
assert_eq "ok news" "$(json_get "$dir/health.json" "j['status'] + ' ' + ' '.join(j['models'])")" "/healthz"
call 200 "$dir/models.json" GET /v1/models
assert_eq "news fasttext" "$(json_get "$dir/models.json" "j['models'][0]['name'] + ' ' + j['models'][0]['family']")" "/v1/models"
assert_eq "$(paste -sd, "$tiny/class.txt")" "$(json_get "$dir/models.json" "','.join(j['models'][0]['labels'])")" "labels"
assert_eq "$(json_get "$dir/news/manifest.json" "j['training']['test_accuracy']")" \
  "$(json_get "$dir/models.json" "j['models'][0]['metrics']['test_accuracy']")" "test accuracy from the manifest"

# --- one request of 9 titles (3 batches of at most 4): the bytes predict writes ---
post_json 200 "$dir/all.json" "{\"titles\": $titles_json, \"top_k\": 2}"
same_as_predict "$dir/predict.jsonl" news "$dir/all.json"
post_json 200 "$dir/named.json" "{\"titles\": $titles_json, \"top_k\": 2, \"model\": \"news\"}"
same_as_predict "$dir/predict.jsonl" news "$dir/named.json"

# --- a blank title is abstained, not guessed, beside an answered one ---
post_json 200 "$dir/blank.json" '{"titles": [" ", "足球联赛 主队获胜"]}'
assert_eq "(None, True, [], False)" \
  "$(json_get "$dir/blank.json" "tuple(j['results'][0][k] for k in ('label', 'abstained', 'top_k')) + ('abstained' in j['results'][1],)")" \
  "blank title in a request"

# --- 9 concurrent one-title requests, gathered by the micro-batcher ---
batches_before=$(curl -s "$base/metrics" | sed -n 's/^newscls_batch_size_count{model="news"} //p')
python3 -c "import json,sys
for i, t in enumerate(open(sys.argv[1], encoding='utf-8').read().splitlines(), 1):
    open(f'{sys.argv[2]}/one.{i}.body', 'w', encoding='utf-8').write(json.dumps({'titles': [t], 'top_k': 2}, ensure_ascii=False))
" "$dir/titles.txt" "$dir"
for i in $(seq 9); do
  curl -s -o "$dir/one.$i.json" -H 'Content-Type: application/json' --data-binary "@$dir/one.$i.body" "$base/v1/classify" &
done
wait $(jobs -p | grep -v "^$server_pid$")
same_as_predict "$dir/predict.jsonl" news "$dir"/one.{1..9}.json
batches_after=$(curl -s "$base/metrics" | sed -n 's/^newscls_batch_size_count{model="news"} //p')
(( batches_after - batches_before < 9 )) || fail "9 concurrent requests ran in $((batches_after - batches_before)) batches: none gathered"

# --- errors: JSON bodies with the right status and code ---
expect_error 400 malformed_json POST /v1/classify --data-binary '{"titles": ['
printf '{"titles": ["\xff\xfe"]}' >"$dir/bad_utf8.json"
expect_error 400 invalid_utf8 POST /v1/classify --data-binary "@$dir/bad_utf8.json"
expect_error 400 wrong_type POST /v1/classify --data-binary '{"titles": "one title"}'
expect_error 400 wrong_type POST /v1/classify --data-binary '{"titles": [1, 2]}'
expect_error 400 wrong_type POST /v1/classify --data-binary '{"titles": ["a"], "top_k": "3"}'
expect_error 400 wrong_type POST /v1/classify --data-binary '[["a"]]'
expect_error 400 empty_titles POST /v1/classify --data-binary '{"titles": []}'
expect_error 400 missing_titles POST /v1/classify --data-binary '{"top_k": 1}'
expect_error 400 unknown_key POST /v1/classify --data-binary '{"titles": ["a"], "title": "b"}'
expect_error 400 empty_body POST /v1/classify -H 'Content-Length: 0'
python3 -c "print('[' * 3000)" >"$dir/deep.json"
expect_error 400 too_deep POST /v1/classify --data-binary "@$dir/deep.json"
expect_error 404 unknown_model POST /v1/classify --data-binary '{"titles": ["a"], "model": "nope"}'
expect_error 404 not_found GET /v2/everything
expect_error 405 method_not_allowed GET /v1/classify
expect_error 405 method_not_allowed POST /healthz --data-binary '{}'
expect_error 405 method_not_allowed DELETE /v1/models
python3 -c "import json; print(json.dumps({'titles': ['x' * 100] * 50}))" >"$dir/big.json"
expect_error 413 body_too_large POST /v1/classify --data-binary "@$dir/big.json"
expect_error 413 body_too_large POST /v1/classify -H 'Transfer-Encoding: chunked' --data-binary "@$dir/big.json"
python3 -c "import json; print(json.dumps({'titles': ['x'] * 51}))" >"$dir/many.json"
expect_error 413 too_many_titles POST /v1/classify --data-binary "@$dir/many.json"
expect_error 411 length_required POST /v1/classify
expect_error 415 unsupported_media_type POST /v1/classify -F 'titles=a'
# A key given twice is refused by name, not read last-wins.
expect_error 400 duplicate_key POST /v1/classify --data-binary '{"titles": ["a"], "titles": ["b"]}'
assert_contains "$dir/error.json" 'the key \"titles\" is given twice'
# Content-Encoding: gzip and deflate (any case) are decoded; an unknown coding is 415 by name,
# a body that is not what its coding says is named so.
python3 -c "import gzip,sys,zlib; b=b'{\"titles\": [\"a\"]}'; open(sys.argv[1]+'.gz','wb').write(gzip.compress(b)); open(sys.argv[1]+'.zz','wb').write(zlib.compress(b))" "$dir/body"
post_json 200 "$dir/gzip.json" "@$dir/body.gz" -H 'Content-Encoding: gzip'
post_json 200 "$dir/deflate.json" "@$dir/body.zz" -H 'Content-Encoding: Deflate'
expect_error 415 unsupported_media_type POST /v1/classify -H 'Content-Encoding: foo' --data-binary '{"titles": ["a"]}'
assert_contains "$dir/error.json" 'Content-Encoding \"foo\" is not supported'
expect_error 400 bad_encoding POST /v1/classify -H 'Content-Encoding: deflate' --data-binary '{"titles": ["a"]}'
assert_contains "$dir/error.json" 'not valid deflate data'

# Range is ignored on POST: the whole classify answer comes back.
curl -s -o "$dir/range.json" -w '%{http_code}' -H 'Range: bytes=0-20' -H 'Content-Type: application/json' \
  --data-binary '{"titles": ["足球联赛 主队获胜"]}' "$base/v1/classify" >"$dir/range.code"
assert_eq 200 "$(cat "$dir/range.code")" "Range on POST"
assert_eq 1 "$(json_get "$dir/range.json" "len(j['results'])")" "whole answer despite Range"

# --- access log: one line per request, counts but never titles; /metrics ---
assert_contains "$dir/server.log" '"POST /v1/classify" 200'
assert_contains "$dir/server.log" 'model=news titles=9'
assert_contains "$dir/server.log" '"GET /v1/classify" 405'
if grep -qF "$(head -n 1 "$dir/titles.txt")" "$dir/server.log"; then fail "a title reached the access log"; fi
call 200 "$dir/metrics.txt" GET /metrics
assert_contains "$dir/metrics.txt" 'newscls_http_requests_total{path="/v1/classify",status="200"}'
assert_contains "$dir/metrics.txt" 'newscls_http_requests_total{path="/v1/classify",status="413"} 3'
assert_contains "$dir/metrics.txt" 'newscls_http_request_duration_seconds_bucket{path="/v1/classify",le="+Inf"}'
assert_contains "$dir/metrics.txt" 'newscls_titles_total{model="news"}'
assert_contains "$dir/metrics.txt" 'newscls_queue_depth{model="news"} 0'
stop_server TERM

# --- a full queue answers 503 at once: the first request waits 5 s for its batch (the time
# this test has to see it queued and send the second) ---
start_server "$dir/queue.log" --model-dir "$dir/news" --queue 1 --max-batch 1000 --max-wait-ms 5000
post_json 200 "$dir/first.json" '{"titles": ["湖人队主场击败勇士队"]}' &
first=$!
wait_until 60 "the first request to wait in the queue" queue_depth_is news 1
expect_error 503 overloaded POST /v1/classify --data-binary '{"titles": ["网球公开赛决赛"]}'
wait "$first" || fail "the queued request failed"
assert_contains "$dir/first.json" '"results"'
stop_server TERM
echo "test_serve_api: ok"
