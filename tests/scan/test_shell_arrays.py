"""Bash arrays a serving script fills and expands into `vllm serve` (client_model/shell_arrays.py): their words reach
the command (DC111 checks their flags; DC102 sees a `--no-enable-prefix-caching` among them), and an array the script
writes in a way driftcheck does not follow stays computed. Scanned against the real vLLM 0.26.0."""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR
from driftcheck.client_model.shell_arrays import expanded_array, read_arrays
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm


def _lines(text: str) -> list[str]:
    return textwrap.dedent(text).lstrip("\n").splitlines()


def _scan(tmp_path, files: dict[str, str], only: list[str]):
    root = tmp_path / "client"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    result = scan(resolve_vllm("0.26.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=only))
    assert not result.internal_errors
    return result


# ------------------------------------------------------------------------------------------ reading arrays
def test_words_with_their_lines_comments_and_quotes_read_off():
    lines = _lines("""
        ARGS=(
          --model "$MODEL"   # the checkpoint
          --tensor-parallel-size 8
          --speculative-config '{"method": "eagle3", "num_speculative_tokens": 3}'
        )
        ARGS+=( --enforce-eager )
        vllm serve "${ARGS[@]}"
    """)
    array = read_arrays(lines)["ARGS"]
    assert array.words == [("--model", 2), ("$MODEL", 2), ("--tensor-parallel-size", 3), ("8", 3),
                           ("--speculative-config", 4), ('{"method": "eagle3", "num_speculative_tokens": 3}', 4),
                           ("--enforce-eager", 6)]
    assert array.first_line == 1 and array.appends == [6]
    assert expanded_array("${ARGS[@]}", {"ARGS": array}, 7) is array
    # an append below the command does not reach it: the words are not known there
    assert expanded_array("${ARGS[@]}", {"ARGS": array}, 5) is None


def test_arrays_written_in_ways_not_followed_are_not_read():
    lines = _lines("""
        if [ -n "$EAGER" ]; then
          ARGS=( --enforce-eager )
        else
          ARGS=( --max-model-len 4096 )
        fi
        local -a EXTRA=( --seed 1 )
        EXTRA[2]=--bogus
        declare -a FROM_FILE=( --a )
        mapfile -t FROM_FILE < flags.txt
        SCALAR="--x --y"
        OPEN=( --never-closed
    """)
    assert read_arrays(lines) == {}


def test_an_array_under_local_or_declare_is_read():
    lines = _lines("""
        serve() {
          local -a args=( --port 8000 )
          vllm serve m "${args[@]}"
        }
    """)
    assert [w for w, _ in read_arrays(lines)["args"].words] == ["--port", "8000"]


# ------------------------------------------------------------------------------------------ DC111
RUN_SERVER = """
    #!/bin/bash
    MODEL=/models/glm
    ARGS=(
      --model "$MODEL"
      --tensor-parallel-size 8   # one node
      --tiered-moe-placement-profile prof.json
    )
    vllm serve "${ARGS[@]}"
"""


def test_dc111_reads_the_flags_of_an_array_the_command_expands(tmp_path):
    # alint77's run-server.sh (batch 12e): a fork's flag passed through an array, which the command only expands
    [f] = [f for f in _scan(tmp_path, {"run-server.sh": RUN_SERVER}, ["DC111"]).findings]
    assert f.severity == "error" and f.client.line == 6 and "--tiered-moe-placement-profile" in f.message


def test_dc111_twins_an_array_written_twice_or_never_expanded_into_vllm(tmp_path):
    twice = RUN_SERVER.replace('vllm serve', 'if [ -n "$X" ]; then ARGS=( --port 1 ); fi\n    vllm serve')
    other = RUN_SERVER.replace('vllm serve "${ARGS[@]}"', 'python bench.py "${ARGS[@]}"')
    fine = RUN_SERVER.replace("--tiered-moe-placement-profile prof.json", "--max-model-len 4096")
    for name, text in {"twice.sh": twice, "other.sh": other, "fine.sh": fine}.items():
        assert _scan(tmp_path / name, {name: text}, ["DC111"]).findings == [], name


# ------------------------------------------------------------------------------------------ DC102
def test_dc102_prefix_caching_turned_off_inside_the_array(tmp_path):
    files = {
        "in_array.sh": """
            ARGS=(
              --speculative-config '{"method": "extract_hidden_states", "num_speculative_tokens": 1}'
              --no-enable-prefix-caching
            )
            vllm serve /models/x "${ARGS[@]}"
        """,
        "appended.sh": """
            ARGS=(
              --speculative-config '{"method": "extract_hidden_states", "num_speculative_tokens": 1}'
            )
            ARGS+=( --no-enable-prefix-caching )
            vllm serve /models/x "${ARGS[@]}"
        """,
        "expanded.sh": """
            EXTRA=( --no-enable-prefix-caching )
            vllm serve /models/x \\
              --speculative-config '{"method": "extract_hidden_states", "num_speculative_tokens": 1}' \\
              "${EXTRA[@]}"
        """,
        "left_on.sh": """
            ARGS=(
              --speculative-config '{"method": "extract_hidden_states", "num_speculative_tokens": 1}'
              --max-model-len 4096
            )
            vllm serve /models/x "${ARGS[@]}"
        """,
    }
    found = _scan(tmp_path, files, ["DC102"]).findings
    assert [(f.client.path, f.client.line, f.severity) for f in found] == [("left_on.sh", 2, "warning")]


# ------------------------------------------------------------------------------------------ YAML blocks (batch 15b)
HELM = """
    spec:
      containers:
        - name: server
          command: ["/bin/sh", "-c"]
          args:
            - |
              # Launch the server
              echo starting
              vllm serve {{ .Values.model }} \\
                --max-model-len 4096 \\
              {{- range $key, $value := .Values.serverArgs }}
                --{{ $key }} {{ $value }} \\
              {{- end }}
                --bogus-flag-x
"""


def test_dc111_reads_a_yaml_block_past_its_comment_lines_and_leaves_template_words_computed(tmp_path):
    # gpu-recipes' Helm templates: a `# ...` line in the block hid the command (R1); once read, `--{{ $key }}` is a
    # flag Helm renders, not the flag `--{{` (F1)
    found = _scan(tmp_path, {"templates/launcher.yaml": HELM}, ["DC111"]).findings
    assert [(f.severity, f.client.line) for f in found] == [("error", 14)]
    assert "--bogus-flag-x" in found[0].message


def test_dc111_reads_slurm_batch_scripts(tmp_path):
    # batch 15b's R3: a SLURM `.sbatch` script is a shell script whose `#SBATCH` lines are comments
    job = """
        #!/bin/bash
        #SBATCH --job-name=serve
        #SBATCH --gres=gpu:8
        vllm serve /models/x --tensor-parallel-size 8 --bogus-flag-x
    """
    found = _scan(tmp_path, {"jobs/serve.sbatch": job}, ["DC111"]).findings
    assert [(f.client.path, f.client.line, f.severity) for f in found] == [("jobs/serve.sbatch", 4, "error")]


def test_dc111_reads_a_command_an_array_holds_whole(tmp_path):
    # batch 15b's R4 (nikocevicstefan/vllm-serve): `cmd=("vllm" "serve" "$model")`, appends, then `"${cmd[@]}"`
    files = {
        "one_line.sh": """
            cmd=("vllm" "serve" "$model_path")
            cmd+=(--tensor-parallel-size "$TP")
            if [ -n "$X" ]; then
              cmd+=(--bogus-held-flag "$X")
            fi
            "${cmd[@]}"
        """,
        "lines.sh": """
            CMD=(
              vllm serve "$m"
              --max-model-len 4096
              --another-bogus
            )
            "${CMD[@]}"
        """,
        "fine.sh": """
            CMD=(vllm serve "$m" --max-model-len 4096)
            "${CMD[@]}"
        """,
    }
    found = _scan(tmp_path, files, ["DC111"]).findings
    assert sorted((f.client.path, f.client.line) for f in found) == [("lines.sh", 4), ("one_line.sh", 4)]


def test_dc111_reads_a_container_whose_entrypoint_is_vllm(tmp_path):
    # batch 16a: `docker run ... --entrypoint vllm "$IMAGE" serve "$PACK" --flags` is `vllm serve` in the container
    files = {
        "serve.sh": """
            docker run --rm --gpus all \\
              --entrypoint vllm "$IMAGE" serve "$PACK" \\
              --max-model-len 4096 --bogus-docker-flag
        """,
        "other.sh": """
            docker run --rm --entrypoint python "$IMAGE" serve.py --bogus-docker-flag
            docker run --rm --entrypoint vllm vllm/vllm-openai:v0.26.0 bench serve --bogus-docker-flag
        """,
        "tagged.sh": """
            docker run --rm --entrypoint=vllm vllm/vllm-openai:v0.26.0 serve m --bogus-docker-flag
        """,
    }
    found = _scan(tmp_path, files, ["DC111"]).findings
    assert sorted((f.client.path, f.client.line) for f in found) == [("serve.sh", 3), ("tagged.sh", 1)]


def test_arrays_each_function_declares_local_are_read_per_function():
    # batch 15b's R2 (pysheeet's run.sh): two functions, each with its own `local args=( ... )`
    lines = _lines("""
        serve_a() {
          local args=( --max-model-len 4096 )
          vllm serve m "${args[@]}"
        }

        function serve_b {
          local args=( --tensor-parallel-size 2 )
          args+=( --enforce-eager )
          vllm serve m "${args[@]}"
        }
        vllm serve m "${args[@]}"
    """)
    arrays = read_arrays(lines)
    a = expanded_array("${args[@]}", arrays, 3)
    b = expanded_array("${args[@]}", arrays, 9)
    assert [w for w, _ in a.words] == ["--max-model-len", "4096"]
    assert [w for w, _ in b.words] == ["--tensor-parallel-size", "2", "--enforce-eager"]
    assert expanded_array("${args[@]}", arrays, 11) is None  # outside both functions: which one ran is not read
