"""DC111 on the flags a container spec hands vLLM's server image (`vllm/vllm-openai`, entrypoint `vllm serve`): batch
15b's R5 / R6. The shapes are those deployment repositories write: a compose service's folded `command: >` and flow
list, a Kubernetes container's `args:` block list (quoted items, trailing comments) and `command: ["python3", "-m",
"vllm.entrypoints.openai.api_server"]` with `args:`, a Helm template, a Dockerfile stage built on the image with an
exec-form `CMD`, and `docker run ... IMAGE ARGS` in a shell script and a Python argument list. Each is checked
against vLLM 0.16.0's real parser; `--use-v2-block-manager` and `--num-scheduler-steps` are flags older releases
had and 0.16.0 does not.
"""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR
from driftcheck.client_model.container_launches import container_commands, dockerfile_commands, server_image
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm


def scan_files(tmp_path, files: dict[str, str], version: str = "0.16.0"):
    root = tmp_path / "client"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC111"]))
    assert not result.internal_errors
    return ({(f.client.path, f.client.line, f.symbol, f.severity) for f in result.findings},
            {(u.client.path, u.client.line, u.message) for u in result.unknown if u.rule == "DC111"})


COMPOSE = """
    version: '3.8'
    services:
      chroma:
        image: chromadb/chroma:latest
        command: --host 0.0.0.0 --not-vllms-flag
      embedder:
        image: vllm/vllm-openai:latest
        ports:
          - "8002:8000"
        command: >
          --model /models/bge-large
          --served-model-name bge
          --use-v2-block-manager
        restart: unless-stopped
      chat:
        command: ["--model", "m", "--num-scheduler-steps", "4"]
        image: "vllm/vllm-openai:${VLLM_TAG:-latest}"
      legacy:
        image: vllm/vllm-openai:latest
        entrypoint: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
        command:
          - --model
          - m
          - --use-v2-block-manager
"""


def test_compose_command_is_the_server_images_cmd(tmp_path):
    found, unknown = scan_files(tmp_path, {"docker-compose.yml": COMPOSE})
    assert found == {
        ("docker-compose.yml", 13, "vllm serve --use-v2-block-manager", "error"),
        ("docker-compose.yml", 16, "vllm serve --num-scheduler-steps", "error"),
        ("docker-compose.yml", 24, "python -m vllm.entrypoints.openai.api_server --use-v2-block-manager", "error"),
    }
    assert unknown == set()


def test_compose_twin_with_flags_the_release_has(tmp_path):
    text = COMPOSE.replace("--use-v2-block-manager", "--enable-prefix-caching").replace("--num-scheduler-steps", "--max-num-seqs")
    assert scan_files(tmp_path, {"docker-compose.yml": text}) == (set(), set())


K8S = """
    apiVersion: apps/v1
    kind: Deployment
    spec:
      template:
        spec:
          containers:
          - name: vllm
            resources:
              limits:
                nvidia.com/gpu: "2"
            image: vllm/vllm-openai:v0.16.0
            args:
            - "--model"
            - "/models/DeepSeek"
            - "--tensor-parallel-size"
            - "2"                         # two GPUs a pod
            - "--num-scheduler-steps"     # multi-step scheduling
            - "8"
            ports:
            - containerPort: 8000
          - name: sidecar
            image: busybox
            args: ["--not-vllms-flag"]
    ---
    apiVersion: apps/v1
    kind: Deployment
    spec:
      template:
        spec:
          containers:
          - name: vllm-gpu
            image: vllm/vllm-openai:nightly
            command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
            args:
            - "--model=$(MODEL_PATH)"
            - "--gpu-memory-utilization=0.95"
            - "--use-v2-block-manager=true"
          - name: shell
            image: vllm/vllm-openai:latest
            command: ["/bin/sh", "-c"]
            args:
            - |
              vllm serve m --port 8000 --num-scheduler-steps 4
"""


def test_kubernetes_args_and_command(tmp_path):
    found, unknown = scan_files(tmp_path, {"deploy/vllm.yaml": K8S})
    assert found == {
        ("deploy/vllm.yaml", 17, "vllm serve --num-scheduler-steps", "error"),
        ("deploy/vllm.yaml", 37, "python -m vllm.entrypoints.openai.api_server --use-v2-block-manager", "error"),
        # a shell script the container runs: read as before, once
        ("deploy/vllm.yaml", 43, "vllm serve --num-scheduler-steps", "error"),
    }
    assert unknown == set()


def test_kubernetes_twin_with_flags_the_release_has(tmp_path):
    text = K8S.replace("--num-scheduler-steps", "--max-num-seqs").replace("--use-v2-block-manager=true", "--enforce-eager")
    assert scan_files(tmp_path, {"deploy/vllm.yaml": text}) == (set(), set())


def test_an_image_pinned_to_another_release_is_unknown(tmp_path):
    found, unknown = scan_files(tmp_path, {"deploy/vllm.yaml": K8S.replace("vllm-openai:v0.16.0", "vllm-openai:v0.6.6")})
    assert ("deploy/vllm.yaml", 17, "vllm serve --num-scheduler-steps", "error") not in found
    [(path, line, message)] = [u for u in unknown if u[1] == 17]
    assert "`vllm/vllm-openai:v0.6.6` (line 11), whose tag names vLLM 0.6.6, not the target" in message


def test_helm_template(tmp_path):
    found, unknown = scan_files(tmp_path, {"chart/templates/deployment.yaml": """
          containers:
            - name: {{ .Chart.Name }}
              image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
              args:
                - --model
                - {{ .Values.model }}
                - --not-known-to-run-vllm
            - name: server
              image: "vllm/vllm-openai:{{ .Values.tag }}"
              args:
                {{- range .Values.extraArgs }}
                - {{ . }}
                {{- end }}
                - --num-scheduler-steps
                - {{ .Values.steps | quote }}
    """})
    # an image named by a template may be anything: its arguments are not read; the server image's are, around the loop
    assert found == {("chart/templates/deployment.yaml", 14, "vllm serve --num-scheduler-steps", "error")}
    assert unknown == set()


def test_dockerfile_cmd_of_a_stage_built_on_the_image(tmp_path):
    found, _ = scan_files(tmp_path, {
        "Dockerfile": """
            FROM vllm/vllm-openai:latest AS base
            RUN pip install --no-cache-dir my-plugin
            FROM base
            CMD ["--model", "m", "--use-v2-block-manager"]
        """,
        "docker/Dockerfile.serve": """
            FROM python:3.12-slim
            ENTRYPOINT ["vllm", "serve"]
            CMD ["m", "--num-scheduler-steps", "8"]
        """,
        "docker/Dockerfile.shell": """
            FROM vllm/vllm-openai:latest
            CMD --model m --use-v2-block-manager
        """,
    })
    # the shell form runs `/bin/sh -c "..."` after the entrypoint: not flags; the ENTRYPOINT line is not read twice
    assert found == {("Dockerfile", 4, "vllm serve --use-v2-block-manager", "error"),
                     ("docker/Dockerfile.serve", 3, "vllm serve --num-scheduler-steps", "error")}


def test_docker_run_of_the_image(tmp_path):
    found, _ = scan_files(tmp_path, {
        "run.sh": """
            #!/bin/bash
            docker run --runtime nvidia --gpus all \\
                -v ~/.cache/huggingface:/root/.cache/huggingface \\
                -p 8000:8000 --ipc=host \\
                vllm/vllm-openai:latest \\
                --model mistralai/Mistral-7B-v0.1 --use-v2-block-manager
            docker run --entrypoint bash vllm/vllm-openai:latest -c "echo --not-a-flag"
            podman run --rm vllm/vllm-openai:v0.16.0 --model m --max-num-seqs 8
        """,
        "launch.py": """
            import subprocess
            subprocess.run(["docker", "run", "--gpus", "all", "vllm/vllm-openai:v0.16.0", "--model", "m",
                            "--num-scheduler-steps", "4"], check=True)
        """,
    })
    assert found == {("run.sh", 6, "vllm serve --use-v2-block-manager", "error"),
                     ("launch.py", 3, "vllm serve --num-scheduler-steps", "error")}


def test_server_image_names():
    for ref in ("vllm/vllm-openai", "vllm/vllm-openai:v0.9.0", "docker.io/vllm/vllm-openai:latest",
                "registry.local:5000/mirror/vllm-openai:v0.10.2-aibrix", "vllm/vllm-openai@sha256:" + "a" * 64,
                "vllm/vllm-openai:${VLLM_TAG:-latest}", '"vllm/vllm-openai:nightly"', "vllm/vllm-openai:{{ .Values.tag }}"):
        assert server_image(ref), ref
    for ref in ("vllm/vllm-tpu:nightly", "rocm/vllm:latest", "my/vllm-openai-proxy", "vllm-openai/other", "busybox"):
        assert not server_image(ref), ref


def test_mapping_keys_above_and_below_the_image():
    lines = textwrap.dedent("""
        containers:
        - name: a
          args:
          - --x
          image: vllm/vllm-openai
        - image: vllm/vllm-openai
          args: [--y, "--z=1"]
        - image: busybox
          command: [sh]
    """).strip().splitlines()
    [a, b, busybox] = container_commands(lines)
    assert a.words == [("vllm", 5), ("serve", 5), ("--x", 4)] and a.line == 3 and a.rows == {3, 4}
    assert b.words == [("vllm", 6), ("serve", 6), ("--y", 7), ("--z=1", 7)] and b.image == ("vllm/vllm-openai", 6)
    assert busybox.words == [("sh", 9)]  # (its command replaces the entrypoint; no vLLM word: launches reads none)


def test_dockerfile_stages():
    lines = textwrap.dedent("""
        FROM vllm/vllm-openai:v0.9.0 AS serve
        FROM serve
        ENTRYPOINT ["bash"]
        CMD ["-c", "x"]
        FROM serve
        CMD ["--model", "m"]
    """).strip().splitlines()
    [bash, flags] = dockerfile_commands(lines)
    assert bash.words[0] == ("bash", 3)
    # the stage inherits the entrypoint and the image (its tag pins the release) of the stage it is built on
    assert flags.words == [("vllm", 1), ("serve", 1), ("--model", 6), ("m", 6)]
    assert flags.image == ("vllm/vllm-openai:v0.9.0", 1)


def test_arguments_that_start_the_server_again(tmp_path):
    found, _ = scan_files(tmp_path, {"docker-compose.yml": """
        services:
          llm:
            image: vllm/vllm-openai:v0.16.0
            command: ["vllm", "serve", "/models/Qwen3", "--max-num-seqs", "8"]
          ok:
            image: vllm/vllm-openai:v0.16.0
            command: ["/models/Qwen3", "--max-num-seqs", "8"]
          own:
            image: vllm/vllm-openai:v0.16.0
            entrypoint: ["vllm", "serve"]
            command: ["/models/Qwen3"]
          mirror:
            image: registry.local/mirror/vllm-openai:v0.16.0
            command: ["vllm", "serve", "/models/Qwen3"]
    """})
    # only the official image's entrypoint is known for certain (a build that keeps the name may reset it)
    assert found == {("docker-compose.yml", 4, "vllm serve serve", "error")}


def test_image_in_a_variable_with_a_default_and_scripts_a_shell_runs(tmp_path):
    """Batch 18a: aibrix's standalone compose names `${VLLM_IMAGE:-vllm/vllm-openai:v0.6.6}` (M1); kubernetes-sigs/lws'
    leader runs `command: [sh, -c, "<script over two lines>"]` (M3); aibrix's Ray head `command: ["/bin/bash", "-lc",
    "--"]` with the script in `args:` (M4); a shell script's `bash -c "vllm serve ..."`."""
    found, unknown = scan_files(tmp_path, {
        "docker-compose.yml": """
            services:
              llm:
                image: ${VLLM_IMAGE:-vllm/vllm-openai:v0.16.0}
                command: >
                  --model m
                  --use-v2-block-manager
        """,
        "lws.yaml": """
            spec:
              containers:
                - name: vllm-leader
                  image: vllm/vllm-openai:v0.16.0
                  command:
                    - sh
                    - -c
                    - "bash /workspace/multi-node-serving.sh leader --ray_cluster_size=$(LWS_GROUP_SIZE);
                       python3 -m vllm.entrypoints.openai.api_server --port 8080 --model $MODEL --num-scheduler-steps 2"
        """,
        "fleet.yaml": """
            spec:
              containers:
                - name: ray-head
                  image: vllm/vllm-openai:v0.16.0
                  command: ["/bin/bash", "-lc", "--"]
                  args: ["ray start --head; vllm serve $MODEL --use-v2-block-manager"]
        """,
        "start.sh": """
            bash -c "vllm serve $MODEL --num-scheduler-steps 2"
            echo "Deploy with: vllm serve $MODEL --not-run" | tee log
            bash -c "echo vllm serve m --not-run-either"
            echo vllm serve m --printed; vllm serve m --max-num-seqs 4
        """,
    })
    assert found == {("docker-compose.yml", 6, "vllm serve --use-v2-block-manager", "error"),
                     ("lws.yaml", 9, "python -m vllm.entrypoints.openai.api_server --num-scheduler-steps", "error"),
                     ("fleet.yaml", 6, "vllm serve --use-v2-block-manager", "error"),
                     ("start.sh", 1, "vllm serve --num-scheduler-steps", "error")}
    assert unknown == set()
    # the variable's default pins the release: another one than the target's makes the flag unknown
    _, unknown = scan_files(tmp_path / "pinned", {"docker-compose.yml": """
        services:
          llm:
            image: "${VLLM_IMAGE:-vllm/vllm-openai:v0.6.6}"
            command: --model m --use-v2-block-manager
    """})
    [(_, line, message)] = unknown
    assert line == 4 and "`vllm/vllm-openai:v0.6.6` (line 3)" in message


def test_a_helm_charts_conditional_flags_are_not_certain(tmp_path):
    # a chart renders a flag under `{{- if ... }}` only where its values say so (a release check, an option): such a
    # flag is not certain to reach the server; the flags outside the conditional are
    found, unknown = scan_files(tmp_path, {"chart/templates/deployment.yaml": """
          containers:
            - name: vllm
              image: "vllm/vllm-openai:{{ .Values.tag }}"
              args:
                - --model
                - {{ .Values.model | quote }}
                {{- if semverCompare "<0.7.0" .Values.tag }}
                - --use-v2-block-manager
                {{- end }}
                {{- if .Values.steps }}
                - --num-scheduler-steps
                - {{ .Values.steps | quote }}
                {{- end }}
                - --num-scheduler-steps
    """})
    assert found == {("chart/templates/deployment.yaml", 14, "vllm serve --num-scheduler-steps", "error")}
    assert unknown == set()


def test_docker_run_of_an_image_a_variable_holds(tmp_path):
    # batch 18a's M2 (serve_reference.sh): `IMAGE="${IMAGE:-vllm/vllm-openai:TAG}"`, then `docker run ... "$IMAGE" ARGS`
    found, unknown = scan_files(tmp_path, {
        "serve.sh": """
            IMAGE="${IMAGE:-vllm/vllm-openai:v0.16.0}"
            docker run -d --gpus all "$IMAGE" \\
              /model --served-model-name m \\
              --num-scheduler-steps 4
        """,
        "pinned.sh": """
            : "${IMG:=vllm/vllm-openai:v0.6.6}"
            docker run --rm ${IMG} --model m --use-v2-block-manager
        """,
        "twice.sh": """
            IMAGE=vllm/vllm-openai:v0.16.0
            if [ -n "$CPU" ]; then IMAGE=my/cpu-image; fi
            docker run "$IMAGE" --model m --use-v2-block-manager
            docker run "$OTHER" --model m --use-v2-block-manager
        """,
    })
    assert found == {("serve.sh", 4, "vllm serve --num-scheduler-steps", "error")}
    [(path, line, message)] = unknown
    assert (path, line) == ("pinned.sh", 2) and "`vllm/vllm-openai:v0.6.6` (line 2)" in message


def test_larger_charts_shapes(tmp_path):
    """Batch 18b: production-stack writes `{{- if }}` lines at column 0 and inside a `command:` list (an executable per
    branch); llm-d's presets list `- vllm` / `- serve` as block items (a file no `vllm serve` text marks); a
    `{{DOCKER_IMAGE_PREFIX}}` in front of the image; an image of another project whose tag is its own release."""
    found, unknown = scan_files(tmp_path, {
        "chart/templates/deployment-vllm-multi.yaml": """
            spec:
              template:
                spec:
                  containers:
                    - name: "vllm"
                      image: "lmcache/vllm-openai:latest"
            {{- if .Values.servingEngineSpec.runtimeClassName }}
                      runtimeClassName: nvidia
            {{- end }}
                      command:
                      {{- if eq .Values.repository "lmcache/vllm-openai" }}
                      - "/opt/venv/bin/vllm"
                      {{- else }}
                      - "vllm"
                      {{- end }}
                      - "serve"
                      - "m"
            {{- if .Values.enableLoRA }}
                      - "--enable-lora-bogus"
            {{- end }}
                      - "--use-v2-block-manager"
        """,
        "presets/basic.yaml": """
            spec:
              containers:
                - name: vllm
                  image: ghcr.io/llm-d/llm-d:0.0.8
                  command:
                    - vllm
                    - serve
                    - m
                  args:
                    - "--port"
                    - "8001"
                    - "--num-scheduler-steps"
        """,
        "model.yaml": """
            spec:
              containers:
                - name: vllm
                  image: {{DOCKER_IMAGE_PREFIX}}vllm/vllm-openai:v0.16.0
                  args:
                    - m
                    - --use-v2-block-manager=1
                - name: llm-d
                  image: ghcr.io/llm-d/llm-d-cuda:v0.9.0
                  command: ["vllm", "serve"]
                  args: [/mnt/models, --num-scheduler-steps, "4"]
        """,
    })
    assert found == {("chart/templates/deployment-vllm-multi.yaml", 21, "vllm serve --use-v2-block-manager", "error"),
                     ("presets/basic.yaml", 12, "vllm serve --num-scheduler-steps", "error"),
                     ("model.yaml", 7, "vllm serve --use-v2-block-manager", "error"),
                     # llm-d's tag is llm-d's release, not vLLM's: the launch may run the target
                     ("model.yaml", 11, "vllm serve --num-scheduler-steps", "error")}
    assert unknown == set()


def test_connectors_of_a_factory_whose_lookup_takes_the_whole_config(tmp_path):
    """Batch 18b's F1: 0.9.2's `create_connector_v0(cls, rank, local_rank, config)` reads
    `config.kv_transfer_config.kv_connector`; the registry was not found, so every connector was an unknown."""
    files = {"serve.sh": """
        vllm serve m --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
        vllm serve m --kv-transfer-config '{"kv_connector":"NixlConnectr","kv_role":"kv_both"}'
    """}
    found, unknown = scan_files(tmp_path, files, version="0.9.2")
    assert found == {("serve.sh", 2, "kv_connector=NixlConnectr", "error")} and unknown == set()
    # 0.8.5 has no NixlConnector, and its V1 lookup indexes the registry (a KeyError), its V0 one raises ValueError
    found, unknown = scan_files(tmp_path / "085", files, version="0.8.5")
    assert {f[2] for f in found} == {"kv_connector=NixlConnector", "kv_connector=NixlConnectr"} and unknown == set()


def test_a_compose_service_that_builds_its_image_runs_that_dockerfiles_entrypoint(tmp_path):
    # `image:` beside `build:` names the image compose builds (a Dockerfile that may reset ENTRYPOINT): its `command:`
    # is not known to reach `vllm serve`, unless the service sets the entrypoint itself
    found, _ = scan_files(tmp_path, {"docker-compose.yml": """
        services:
          built:
            image: vllm/vllm-openai:gemma-audio
            build:
              context: ./vllm
              dockerfile: Dockerfile
            command: ["vllm", "serve", "/models/m", "--use-v2-block-manager"]
          built-own-entry:
            image: vllm/vllm-openai:gemma-audio
            build: ./vllm
            entrypoint: ["vllm", "serve"]
            command: ["/models/m", "--num-scheduler-steps", "2"]
    """})
    # the first service's `vllm serve` is read as the command it runs (the line reader's, as before), not as a repeat
    assert found == {("docker-compose.yml", 7, "vllm serve --use-v2-block-manager", "error"),
                     ("docker-compose.yml", 12, "vllm serve --num-scheduler-steps", "error")}


def test_a_shell_script_that_hands_its_arguments_to_the_server(tmp_path):
    # batch 18b's M3 (odh-model-controller's runtimes): `command: [bash, -c, "... exec vllm serve \"$@\"", --]`, the flags
    # in `args:`; the word after the script is its `$0`
    found, unknown = scan_files(tmp_path, {"runtime.yaml": """
        spec:
          containers:
            - name: kserve-container
              image: vllm/vllm-openai:v0.16.0
              command:
                - /bin/bash
                - -c
                - source /etc/profile.d/setup.sh && exec python3 -m vllm.entrypoints.openai.api_server "$@"
                - --
              args:
                - --model=/mnt/models
                - --use-v2-block-manager
            - name: pinned
              image: vllm/vllm-openai:v0.6.6
              command: ["bash", "-c", "exec vllm serve \\"$@\\"", "--"]
              args: ["--model=/mnt/models", "--use-v2-block-manager"]
    """})
    assert found == {("runtime.yaml", 12, "python -m vllm.entrypoints.openai.api_server --use-v2-block-manager", "error")}
    # the script runs in its container's image, whose tag pins another release
    [(_, line, message)] = unknown
    assert line == 16 and "`vllm/vllm-openai:v0.6.6` (line 14)" in message


def test_a_plain_scalar_over_several_lines(tmp_path):
    # batch 18c (kubernetes-sigs/inference-perf's compose example): `command:` with the flags on the lines below it,
    # no `>`; and a plain value that goes on to the next line
    found, _ = scan_files(tmp_path, {"docker-compose.yml": """
        services:
          vllm:
            image: vllm/vllm-openai:latest
            command:
              --model facebook/opt-125m
              --use-v2-block-manager
          other:
            image: vllm/vllm-openai:latest
            command: --model m
              --num-scheduler-steps 2
            ports:
              - "8000:8000"
    """})
    assert found == {("docker-compose.yml", 6, "vllm serve --use-v2-block-manager", "error"),
                     ("docker-compose.yml", 10, "vllm serve --num-scheduler-steps", "error")}
