"""Translation experiment: text handling, data module, model, training, resume, CLI."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import lightning as L
import pytest
import torch
from lightning.pytorch.callbacks import ModelCheckpoint

from tssdpa.translation import (
    TranslationDataModule,
    TranslationSystem,
    TranslationTransformer,
    Translator,
    Vocabulary,
    read_pairs,
    standardize_english,
    standardize_spanish,
    translate,
)
from tssdpa.translation.data import split_sizes
from tssdpa.translation.text import END_TOKEN, START_TOKEN

REPO = Path(__file__).resolve().parents[2]
SEQUENCE_LENGTH = 8

SUBJECTS = [
    ("I", "Yo", "o"),
    ("You", "Tú", "as"),
    ("He", "Él", "a"),
    ("She", "Ella", "a"),
    ("We", "Nosotros", "amos"),
    ("They", "Ellos", "an"),
]
VERBS = [("see", "mir"), ("want", "dese"), ("buy", "compr"), ("need", "necesit"), ("wash", "lav")]
NOUNS = [
    ("cat", "gato"),
    ("dog", "perro"),
    ("car", "coche"),
    ("book", "libro"),
    ("horse", "caballo"),
    ("bed", "sofá"),
    ("phone", "teléfono"),
    ("tree", "árbol"),
]


def synthetic_pairs() -> list[str]:
    """240 'Subject verb the noun.' → '¿Sujeto verbo el nombre?' lines in the spa.txt format."""
    return [
        f"{se} {ve} the {ne}.\t¿{ss} {vs}{suffix} el {ns}?"
        for (se, ss, suffix), (ve, vs), (ne, ns) in itertools.product(SUBJECTS, VERBS, NOUNS)
    ]


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # Tiny models on a shared 2-core machine: intra-op threads only add contention.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _plain_argv(monkeypatch):
    # LightningCLI(args=...) warns when pytest's own arguments are in sys.argv.
    monkeypatch.setattr(sys, "argv", ["pytest"])


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("spa-eng") / "pairs.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(synthetic_pairs()) + "\n")
    return path


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


def tiny_data(pairs_file, cache_dir, **overrides) -> TranslationDataModule:
    kwargs = dict(
        dataset=str(pairs_file),
        sequence_length=SEQUENCE_LENGTH,
        vocab_size=64,
        batch_size=16,
        cache_dir=str(cache_dir),
    )
    return TranslationDataModule(**(kwargs | overrides))


def tiny_model(attention: str = "standard", **overrides) -> TranslationTransformer:
    kwargs = dict(
        source_vocab_size=64,
        target_vocab_size=64,
        sequence_length=SEQUENCE_LENGTH,
        embed_dim=32,
        num_heads=2,
        head_dim=16,
        feedforward_dim=64,
        output_dropout=0.1,
        attention=attention,
        # Untrained embeddings of width 32 are ~0.3 apart, so σ = 1 keeps the projection
        # kernel from starting as a hard nearest-neighbour choice in a 2-epoch run.
        self_attention_sigma=1.0,
        cross_attention_sigma=1.0,
    )
    return TranslationTransformer(**(kwargs | overrides))


def tiny_trainer(max_epochs: int, **overrides) -> L.Trainer:
    kwargs = dict(
        accelerator="cpu",
        devices=1,
        max_epochs=max_epochs,
        enable_progress_bar=False,
        enable_model_summary=False,
        logger=False,
        enable_checkpointing=False,
    )
    return L.Trainer(**(kwargs | overrides))


# --------------------------------------------------------------------------- text


def test_standardization_follows_keras_example():
    assert standardize_spanish("¿Qué hora es?") == "qué hora es"
    assert standardize_spanish("[start] ¡Hola, Tom! [end]") == "[start] ¡hola tom [end]"
    assert standardize_english("Tom's [big] dog.") == "toms big dog"


def test_vocabulary_layout_and_encoding():
    vocab = Vocabulary.build(["b a", "a c", "a b", "d"], max_tokens=5)
    # padding, OOV, then by count (a: 3, b: 2), ties (c, d: 1) alphabetically, capped at 5.
    assert vocab.tokens == ["", "[UNK]", "a", "b", "c"]
    assert vocab.encode("a d b", 5) == [2, 1, 3, 0, 0]
    assert vocab.encode("a b c a b", 3) == [2, 3, 4]
    assert vocab.decode([3, 2, 0, 1]) == "b a [UNK]"
    with pytest.raises(ValueError, match="max_tokens"):
        Vocabulary.build(["a"], max_tokens=2)


def test_vocabulary_refuses_a_negative_or_fractional_length():
    vocab = Vocabulary(["", "[UNK]", "a", "b"])
    assert vocab.encode("a b a", 0) == [] and vocab.encode_batch(["a"], 0).shape == (1, 0)
    with pytest.raises(ValueError, match="length must be an integer >= 0"):
        vocab.encode_batch(["a b a"], -1)  # had given a (1, 2) tensor
    with pytest.raises(TypeError, match="length must be an int"):
        vocab.encode("a b", 2.5)


def test_read_pairs_drops_a_byte_order_mark(tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_bytes("\ufeffGo.\tVe.\nHi.\tHola.\n".encode())
    assert read_pairs(path) == [("Go.", "Ve."), ("Hi.", "Hola.")]


def test_read_pairs_refuses_a_pair_with_an_empty_side_naming_the_line(tmp_path):
    path = tmp_path / "pairs.txt"
    for text, side in (("Go.\tVe.\n\tHola.\n", "English"), ("Go.\tVe.\nHi.\t  \n", "Spanish")):
        path.write_text(text)
        with pytest.raises(ValueError, match=rf"^{path}:2: empty {side} sentence"):
            read_pairs(path)


def test_read_pairs_ignores_an_attribution_column_and_refuses_a_tab_inside_a_sentence(tmp_path):
    """A TAB in a sentence cut it there: the rest of a Spanish sentence was read as the
    attribution, or of an English one as the Spanish, without a word."""
    path = tmp_path / "pairs.txt"
    path.write_text("Go.\tVe.\tCC-BY 2.0 #1\nHi.\tHola.\tCC-BY 2.0 #2\n")
    assert read_pairs(path) == [("Go.", "Ve."), ("Hi.", "Hola.")]
    cases = [
        ("Go.\tVe.\nI said\thi.\tDije hola.\n", r":2: 3 tab-separated fields \(line 1 has 2\)"),
        ("Go.\tVe.\tCC\nHi.\tHo\tla.\tCC\n", ":2: 4 tab-separated fields"),
        ("I said\thi.\tDije hola.\nGo.\tVe.\n", r":2: 2 tab-separated fields \(line 1 has 3\)"),
    ]
    for text, match in cases:
        path.write_text(text)
        with pytest.raises(ValueError, match=f"{match}.*a TAB inside a sentence"):
            read_pairs(path)


def test_read_pairs_names_the_file_and_line_of_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_bytes(b"Go.\tVe.\n" * 5000 + "Hi.\tHola señor.\n".encode("latin-1"))
    with pytest.raises(ValueError, match=rf"^{path}:5001: not UTF-8"):
        read_pairs(path)
    damaged = tmp_path / "pairs.txt.gz"
    damaged.write_bytes(gzip.compress(b"Go.\tVe.\n" * 5000)[:-12])  # cut short
    with pytest.raises(ValueError, match="not a whole gzip file"):
        read_pairs(damaged)
    damaged.write_bytes(b"Go.\tVe.\n")  # plain text under a .gz name
    with pytest.raises(ValueError, match="not a whole gzip file"):
        read_pairs(damaged)


def test_split_sizes_match_keras_example():
    assert split_sizes(118_964, 0.15, 0.15) == (83_276, 17_844, 17_844)


# --------------------------------------------------------------------------- data


def test_datamodule_split_vocabulary_and_cache(pairs_file, cache_dir):
    dm = tiny_data(pairs_file, cache_dir)
    dm.prepare_data()
    dm.setup("fit")
    n = len(synthetic_pairs())
    sizes = [len(dm.datasets[s]) for s in ("train", "val", "test")]
    assert sizes == list(split_sizes(n, 0.15, 0.15))
    train, test = dm.pairs("train"), dm.pairs("test")
    assert sorted(train + dm.pairs("val") + test) == sorted(
        tuple(line.split("\t")) for line in synthetic_pairs()
    )
    assert not set(train) & set(test)

    # Vocabularies hold only words seen in the training split.
    train_source = {w for e, _ in train for w in standardize_english(e).split()}
    train_target = {w for _, s in train for w in standardize_spanish(s).split()}
    assert set(dm.source_vocab.tokens[2:]) <= train_source
    assert set(dm.target_vocab.tokens[2:]) <= train_target | {START_TOKEN, END_TOKEN}

    source, target, index = dm.datasets["train"][torch.arange(4).tolist()]
    assert source.shape == (4, SEQUENCE_LENGTH) and target.shape == (4, SEQUENCE_LENGTH + 1)
    assert (target[:, 0] == dm.target_vocab.index[START_TOKEN]).all()
    assert index.tolist() == [0, 1, 2, 3]

    # A second module with the same settings reads the cache instead of re-vectorising.
    assert dm.cache_path().is_file()
    again = tiny_data(pairs_file, cache_dir)
    again.setup("fit")
    assert torch.equal(again.arrays["target"], dm.arrays["target"])
    other = tiny_data(pairs_file, cache_dir, seed=1)
    assert other.cache_path() != dm.cache_path()


def test_a_damaged_or_edited_cache_is_rebuilt_not_trusted(pairs_file, tmp_path):
    dm = tiny_data(pairs_file, tmp_path)
    dm.setup()
    path, good = dm.cache_path(), dm.arrays
    edits = {
        "cut short": lambda: path.write_bytes(path.read_bytes()[:5000]),
        "empty": lambda: path.write_bytes(b""),
        "ids past the vocabulary": lambda: torch.save(good | {"target": good["target"] + 99}, path),
        "narrower rows": lambda: torch.save(good | {"source": good["source"][:, :3]}, path),
        "split sizes": lambda: torch.save(good | {"split_sizes": [10, 10, 500]}, path),
        "a missing entry": lambda: torch.save(
            {k: v for k, v in good.items() if k != "english"}, path
        ),
    }
    for edit in edits.values():
        edit()
        with pytest.warns(UserWarning, match="vectorising again"):
            again = tiny_data(pairs_file, tmp_path)
            again.setup()
        assert torch.equal(again.arrays["target"], good["target"])
        assert again.arrays["split_sizes"] == good["split_sizes"]
    with warnings.catch_warnings():  # the rebuilt cache is read as it is
        warnings.simplefilter("error")
        tiny_data(pairs_file, tmp_path).setup()


def test_a_failed_cache_write_leaves_no_file_behind(pairs_file, tmp_path, monkeypatch):
    def save_half(obj, path):
        Path(path).write_bytes(b"half a cache")
        raise OSError("No space left on device")

    monkeypatch.setattr(torch, "save", save_half)
    with pytest.raises(OSError, match="No space left"):
        tiny_data(pairs_file, tmp_path / "cache").prepare_data()
    assert list((tmp_path / "cache").iterdir()) == []


def test_vocabulary_never_sees_test_only_words(tmp_path, cache_dir):
    # Every test-split sentence gets a word of its own; none may enter the vocabulary.
    lines = synthetic_pairs()
    path = tmp_path / "pairs.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    dm = tiny_data(path, cache_dir, vocab_size=10_000)
    dm.setup()
    test_ids = set(dm.splits["test"])
    # Rewrite the file so the test pairs carry unique words, keeping the shuffle order.
    order_english = dm.arrays["english"]
    marked = {order_english[i] for i in test_ids}
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for k, line in enumerate(lines):
            e, s = line.split("\t")
            if e in marked:
                e, s = f"{e} zzeng{k}", f"{s} zzspa{k}"
            fh.write(f"{e}\t{s}\n")
    dm = tiny_data(path, cache_dir, vocab_size=10_000)
    dm.setup()
    assert all("zz" in e for e, _ in dm.pairs("test"))
    assert not any(t.startswith("zzeng") for t in dm.source_vocab.tokens)
    assert not any(t.startswith("zzspa") for t in dm.target_vocab.tokens)
    # ... and those words vectorise to [UNK] (id 1) in the test split.
    assert (dm.datasets["test"].source == 1).any(dim=1).all()


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("sequence_length", 0),
        ("batch_size", 0),
        ("vocab_size", 2),
        ("val_fraction", 1.5),
        ("max_pairs", 2),
    ],
)
def test_datamodule_rejects_bad_arguments(pairs_file, cache_dir, argument, value):
    with pytest.raises(ValueError, match=argument):
        tiny_data(pairs_file, cache_dir, **{argument: value})


def test_datamodule_refuses_a_file_as_its_cache_folder(pairs_file, tmp_path):
    a_file = tmp_path / "cache"
    a_file.write_text("")
    with pytest.raises(ValueError, match="cache_dir .* is a file, not a folder"):
        tiny_data(pairs_file, a_file)


def test_missing_dataset_names_the_search(tmp_path):
    dm = TranslationDataModule(data_dir=str(tmp_path), cache_dir=str(tmp_path))
    dm.dataset = "spa-eng/does-not-exist.txt.gz"
    with pytest.raises(FileNotFoundError, match="does-not-exist"):
        dm.prepare_data()


def test_a_copy_of_the_published_pairs_that_differs_from_it_is_refused(tmp_path, cache_dir):
    copy = tmp_path / "spa-eng" / "spa.txt.gz"  # looked up by the published file's name
    copy.parent.mkdir()
    copy.write_bytes(gzip.compress("\n".join(synthetic_pairs()).encode()))
    dm = TranslationDataModule(data_dir=str(tmp_path), cache_dir=str(cache_dir))
    with pytest.raises(ValueError, match=rf"^{copy}: its contents' sha256 .* not the published"):
        dm.prepare_data()
    copy.write_bytes(copy.read_bytes()[:-20])  # cut short
    with pytest.raises(ValueError, match=rf"^{copy}: not a readable copy"):
        dm.prepare_data()


# --------------------------------------------------------------------------- model


def test_reference_size_has_keras_parameter_count():
    # The Keras example's model.summary() reports 19,960,216 parameters.
    model = TranslationTransformer()
    assert sum(p.numel() for p in model.parameters()) == 19_960_216


@pytest.mark.parametrize("attention", ["standard", "projection"])
def test_padding_mask_hides_padding(attention):
    torch.manual_seed(0)
    model = tiny_model(attention).eval()
    source = torch.tensor([[5, 6, 7, 0, 0, 0, 0, 0]])
    target = torch.tensor([[3, 9, 10, 0, 0, 0, 0, 0]])
    before = model(source, target)[:, :3]
    with torch.no_grad():
        model.source_embedding.tokens.weight[0] += 1.0
        model.target_embedding.tokens.weight[0] += 1.0
    after = model(source, target)[:, :3]
    torch.testing.assert_close(after, before)

    unmasked = tiny_model(attention, padding_mask=False).eval()
    unmasked.load_state_dict(model.state_dict())
    with torch.no_grad():
        unmasked.source_embedding.tokens.weight[0] -= 1.0
    assert not torch.allclose(unmasked(source, target)[:, :3], after)


@pytest.mark.parametrize("attention", ["standard", "projection"])
def test_greedy_decode_agrees_with_teacher_forcing(attention):
    torch.manual_seed(1)
    model = tiny_model(attention).eval()
    source = torch.randint(2, 64, (3, SEQUENCE_LENGTH))
    generated = model.greedy_decode(source, start_id=3, end_id=2)
    assert generated.shape[0] == 3 and 1 <= generated.shape[1] <= SEQUENCE_LENGTH
    prefix = torch.cat([torch.full((3, 1), 3), generated[:, :-1]], dim=1)
    logits = model(source, prefix)
    finished = torch.cumsum(generated == 2, dim=1) - (generated == 2).long() > 0
    expected = logits.argmax(-1).masked_fill(finished, 0)
    assert torch.equal(generated, expected)
    with pytest.raises(ValueError, match="max_length"):
        model.greedy_decode(source, 3, 2, max_length=SEQUENCE_LENGTH + 1)


def test_model_rejects_bad_arguments():
    with pytest.raises(ValueError, match="attention"):
        tiny_model("softmax")
    with pytest.raises(ValueError, match="cross_attention_sigma"):
        tiny_model("projection", cross_attention_sigma=0.0)


@pytest.mark.parametrize("attention", ["standard", "projection"])
@pytest.mark.parametrize(
    ("argument", "value"),
    [("attention_backend", "fusd"), ("learn_sigma", "yes"), ("normalize_qk", 2)],
)
def test_model_refuses_a_bad_setting_when_built_not_at_its_first_step(attention, argument, value):
    with pytest.raises(ValueError, match=argument):
        tiny_model(attention, **{argument: value})


@pytest.mark.parametrize("full_precision", [False, True])
def test_full_precision_attention_under_bf16_autocast(full_precision):
    torch.manual_seed(2)
    model = tiny_model("projection", full_precision_attention=full_precision).eval()
    attention_dtypes = []
    for layer in (model.encoder.self_attn, model.decoder.self_attn, model.decoder.cross_attn):
        layer.register_forward_hook(lambda m, args, out: attention_dtypes.append(out[0].dtype))
    source = torch.randint(2, 64, (2, SEQUENCE_LENGTH))
    reference = model(source, source)
    attention_dtypes.clear()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(source, source)
    expected = torch.float32 if full_precision else torch.bfloat16
    assert attention_dtypes == [expected] * 3
    torch.testing.assert_close(logits.float(), reference, atol=0.1, rtol=0.05)


def test_loss_counts_padding_option():
    torch.manual_seed(3)
    batch = (
        torch.randint(2, 64, (2, SEQUENCE_LENGTH)),
        torch.tensor([[3, 5, 6, 2, 0, 0, 0, 0, 0], [3, 7, 2, 0, 0, 0, 0, 0, 0]]),
        torch.arange(2),
    )
    losses = {}
    for counts_padding in (False, True):
        torch.manual_seed(4)
        system = TranslationSystem(tiny_model(), loss_counts_padding=counts_padding).eval()
        losses[counts_padding] = system._shared_step(batch, "val")
        logits = system(batch[0], batch[1][:, :-1]).transpose(1, 2)
        ignore = -100 if counts_padding else 0
        expected = torch.nn.functional.cross_entropy(logits, batch[1][:, 1:], ignore_index=ignore)
        torch.testing.assert_close(losses[counts_padding], expected)
    assert not torch.isclose(losses[False], losses[True])


# --------------------------------------------------------------------------- training


@pytest.mark.parametrize("attention", ["standard", "projection"])
def test_tiny_training_learns_and_translates(pairs_file, cache_dir, tmp_path, attention):
    L.seed_everything(0)
    dm = tiny_data(pairs_file, cache_dir)
    system = TranslationSystem(tiny_model(attention), learning_rate=3e-3)
    trainer = tiny_trainer(2)
    trainer.fit(system, datamodule=dm)
    history = system.history
    assert [row["epoch"] for row in history] == [0, 1]
    assert history[1]["train_loss"] < history[0]["train_loss"]
    assert history[1]["val_loss"] < history[0]["val_loss"]
    for row in history:
        assert 0.0 <= row["val_keras_accuracy"] <= 1.0 and row["epoch_time_s"] > 0
        assert row["tokens_per_s"] > 0

    test = trainer.test(system, datamodule=dm, verbose=False)[0]
    assert {"test_loss", "test_accuracy", "test_keras_accuracy", "test_bleu"} <= test.keys()
    assert len(system.test_hypotheses) == len(dm.datasets["test"])
    assert all(isinstance(h, str) for h in system.test_hypotheses.values())

    path = tmp_path / "model.ckpt"
    trainer.save_checkpoint(path, weights_only=True)
    translator = Translator.from_checkpoint(path)
    out = translate(["I see the cat.", "They wash the horse."], translator)
    assert len(out) == 2 and all(isinstance(s, str) for s in out)
    # The reloaded model decodes the test split exactly as the trained one did.
    first = dm.pairs("test")[0][0]
    assert translator.translate(first) == [system.test_hypotheses[dm.splits["test"][0]]]


def test_an_untrained_model_translates_into_words_of_its_vocabulary(pairs_file, cache_dir):
    # The synthetic corpus fills 44 of the 64 output entries: ids 44-63 have no word.
    torch.manual_seed(0)
    dm = tiny_data(pairs_file, cache_dir)
    system = TranslationSystem(tiny_model())
    tiny_trainer(0).test(system, datamodule=dm, verbose=False)  # BLEU decodes the test split
    assert len(system.test_hypotheses) == len(dm.datasets["test"])
    words = Vocabulary(["", "[UNK]", START_TOKEN, END_TOKEN, "hola"])
    translator = Translator(tiny_model(), Vocabulary(["", "[UNK]", "i"]), words)
    for sentence in translator.translate(["I see the cat.", "I"]):
        assert set(sentence.split()) <= {"[UNK]", "hola"}


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("touch translator-pickle-ran",))


def test_translator_refuses_a_checkpoint_outside_its_layout_naming_the_file(tmp_path):
    model = tiny_model()
    good = {
        "state_dict": {f"transformer.{k}": v for k, v in model.state_dict().items()},
        "translation": {
            "transformer_config": dict(model.config),
            "source_vocab": ["", "[UNK]", "i", "see"],
            "target_vocab": ["", "[UNK]", START_TOKEN, END_TOKEN, "veo"],
        },
    }
    path = tmp_path / "model.ckpt"
    torch.save(good, path)
    assert len(Translator.from_checkpoint(path).translate(["I see."])) == 1

    def tampered(edit):
        bad = {"state_dict": dict(good["state_dict"]), "translation": dict(good["translation"])}
        edit(bad)
        return bad

    cases = {
        "tensor": torch.zeros(3),
        "longer_vocab": tampered(
            lambda c: c["translation"].update(source_vocab=["", "[UNK]"] + list("abc") * 30)
        ),
        "number_word": tampered(lambda c: c["translation"].update(target_vocab=[*"ab", 5])),
        "unknown_setting": tampered(
            lambda c: c["translation"].update(transformer_config={"bogus": 1})
        ),
        "no_state_dict": tampered(lambda c: c.pop("state_dict")),
        "other_size": tampered(
            lambda c: c["translation"].update(
                transformer_config=dict(model.config, embed_dim=48, head_dim=24)
            )
        ),
    }
    for name, contents in cases.items():
        torch.save(contents, tmp_path / f"{name}.ckpt")
    (tmp_path / "cut.ckpt").write_bytes(path.read_bytes()[:1000])
    (tmp_path / "empty.ckpt").write_bytes(b"")
    with (tmp_path / "pickle.ckpt").open("wb") as fh:
        pickle.dump({"translation": _RunsCode()}, fh)
    for name in [*cases, "cut", "empty", "pickle"]:
        bad = tmp_path / f"{name}.ckpt"
        with pytest.raises(ValueError, match=f"checkpoint '{bad}'"):
            Translator.from_checkpoint(bad)
    assert not (Path.cwd() / "translator-pickle-ran").exists()


@pytest.mark.parametrize(
    "smaller", [{"source_vocab_size": 10}, {"target_vocab_size": 40}, {"sequence_length": 4}]
)
def test_the_system_refuses_a_model_smaller_than_its_data_before_the_first_step(
    pairs_file, cache_dir, smaller
):
    system = TranslationSystem(tiny_model(**smaller), bleu=False)
    with pytest.raises(ValueError, match=f"transformer's {next(iter(smaller))} .* below"):
        tiny_trainer(1).fit(system, datamodule=tiny_data(pairs_file, cache_dir))


def test_a_checkpoint_is_refused_on_data_with_other_vocabularies(pairs_file, cache_dir, tmp_path):
    system, trainer = TranslationSystem(tiny_model(), bleu=False), tiny_trainer(1)
    trainer.fit(system, datamodule=tiny_data(pairs_file, cache_dir))
    path = tmp_path / "model.ckpt"
    trainer.save_checkpoint(path, weights_only=True)
    # the same data: restored; another shuffle (another training split): refused
    same, other = tiny_data(pairs_file, cache_dir), tiny_data(pairs_file, cache_dir, seed=1)
    tiny_trainer(1).test(system, datamodule=same, ckpt_path=path, weights_only=True)
    with pytest.raises(ValueError, match="_vocab is not the data module's"):
        tiny_trainer(1).test(system, datamodule=other, ckpt_path=path, weights_only=True)


def test_translator_refuses_sentences_that_are_not_strings_naming_the_argument():
    words = Vocabulary(["", "[UNK]", START_TOKEN, END_TOKEN, "hola"])
    translator = Translator(tiny_model(), Vocabulary(["", "[UNK]", "i"]), words)
    not_a_sequence = "sentences must be a string or a sequence of strings, got"
    cases = [([None], r"sentences\[0\] must be a string, got NoneType"),
             (["I", 3], r"sentences\[1\] must be a string, got int"),
             (5, f"{not_a_sequence} int"),
             (b"I see", f"{not_a_sequence} bytes")]  # fmt: skip
    for sentences, message in cases:
        with pytest.raises(TypeError, match=message):
            translator.translate(sentences)
    with pytest.raises(TypeError, match="batch_size must be an int"):
        translator.translate(["I"], batch_size=1.5)
    assert len(translator.translate(s for s in ["I", "I see"])) == 2  # any iterable


def test_resume_from_epoch_checkpoint_matches_uninterrupted_run(pairs_file, cache_dir, tmp_path):
    def run(max_epochs: int, ckpt_dir: Path, ckpt_path: str | None = None):
        L.seed_everything(0)
        system = TranslationSystem(tiny_model("projection", output_dropout=0.3))
        checkpoint = ModelCheckpoint(dirpath=ckpt_dir, save_last=True, save_top_k=0)
        trainer = tiny_trainer(
            max_epochs, enable_checkpointing=True, callbacks=[checkpoint], deterministic=True
        )
        trainer.fit(
            system,
            datamodule=tiny_data(pairs_file, cache_dir),
            ckpt_path=ckpt_path,
            weights_only=True if ckpt_path else None,
        )
        return system

    straight = run(3, tmp_path / "straight")
    run(1, tmp_path / "interrupted")
    resumed = run(3, tmp_path / "interrupted", str(tmp_path / "interrupted" / "last.ckpt"))
    assert len(resumed.history) == 3
    for a, b in zip(straight.history, resumed.history):
        for key in ("train_loss", "val_loss", "train_accuracy", "val_accuracy"):
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-6), key
    for (name, p), q in zip(straight.state_dict().items(), resumed.state_dict().values()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6, msg=name)


# --------------------------------------------------------------------------- CLI


def cli_overrides(pairs_file, cache_dir, tmp_path) -> list[str]:
    init = "--model.transformer.init_args"
    return [
        f"--data.dataset={pairs_file}",
        f"--data.cache_dir={cache_dir}",
        f"--data.sequence_length={SEQUENCE_LENGTH}",
        "--data.vocab_size=64",
        "--data.batch_size=16",
        f"{init}.embed_dim=16",
        f"{init}.num_heads=2",
        f"{init}.head_dim=8",
        f"{init}.feedforward_dim=32",
        f"{init}.self_attention_sigma=1.0",
        f"{init}.cross_attention_sigma=1.0",
        "--trainer.max_epochs=1",
        "--trainer.accelerator=cpu",
        "--trainer.logger=false",
        "--trainer.callbacks=[]",
        "--trainer.enable_checkpointing=false",
        "--trainer.enable_model_summary=false",
        f"--trainer.default_root_dir={tmp_path}",
        f"--history_file={tmp_path / 'history.csv'}",
    ]


@pytest.mark.parametrize("attention", ["standard", "projection"])
def test_cli_config_links_data_settings_to_model(pairs_file, cache_dir, tmp_path, attention):
    from tssdpa.translation.cli import TranslationCLI

    config = REPO / f"experiments/configs/translate_{attention}.yaml"
    args = ["--config", str(config), *cli_overrides(pairs_file, cache_dir, tmp_path)]
    cli = TranslationCLI(args=args, run=False)
    transformer = cli.model.transformer
    assert transformer.config["attention"] == attention
    assert transformer.config["sequence_length"] == SEQUENCE_LENGTH
    assert transformer.config["target_vocab_size"] == 64
    assert cli.datamodule.batch_size == 16
    if attention == "projection":
        sigma = cli.model.transformer.decoder.cross_attn.kernel_sigma()
        assert torch.allclose(sigma, torch.ones_like(sigma))


def test_cli_fit_then_test(pairs_file, cache_dir, tmp_path):
    from tssdpa.translation.cli import TranslationCLI

    config = REPO / "experiments/configs/translate_standard.yaml"
    cli = TranslationCLI(
        args=["fit", "--config", str(config), *cli_overrides(pairs_file, cache_dir, tmp_path)]
    )
    assert (tmp_path / "history.csv").read_text().startswith("epoch,train_loss")
    assert "test_bleu" in cli.trainer.callback_metrics


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("--data.batch_size=0", "batch_size must be positive, got 0"),
        ("--trainer.max_epochs=-2", "`max_epochs` must be a non-negative integer"),
        ("--data.max_pairs=2", "--data.max_pairs must be at least 3, got 2"),
        # it trained on the file's 240 pairs without a word
        (
            "--data.max_pairs=100000",
            "--data.max_pairs must be at most the 240 pairs there are, got 100000",
        ),
        ("--data.dataset={latin1}", "{latin1}:2: not UTF-8 text"),
    ],
)
def test_cli_refuses_a_bad_setting_before_training_in_one_line_with_exit_code_2(
    pairs_file, cache_dir, tmp_path, capsys, setting, message
):
    from tssdpa.translation.cli import TranslationCLI

    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Go.\tVe.\nHi.\tHola señor.\n".encode("latin-1"))
    setting, message = (x.format(latin1=latin1) for x in (setting, message))
    config = REPO / "experiments/configs/translate_standard.yaml"
    args = ["fit", "--config", str(config), *cli_overrides(pairs_file, cache_dir, tmp_path)]
    with pytest.raises(SystemExit) as exit_:
        TranslationCLI(args=[*args, setting])
    assert exit_.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("pytest: error: ") and message in last
    assert not (tmp_path / "history.csv").exists()  # refused before training


@pytest.mark.parametrize("data_dir", ["no_such_folder", "."])
def test_cli_names_its_own_data_dir_option_when_the_dataset_is_not_found(
    pairs_file, cache_dir, tmp_path, capsys, monkeypatch, data_dir
):
    """translate.py's option is --data.data_dir: it said 'Pass --data-dir' (and 'data_dir
    (--data-dir): no folder'), which it rejects as an unrecognized argument."""
    from tssdpa.translation.cli import TranslationCLI

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TSSDPA_DATA", raising=False)
    monkeypatch.setattr("tssdpa.data.paths.CACHE_DIR", tmp_path / "no_cache")
    monkeypatch.setattr("tssdpa.data.paths._REPO_ROOT", tmp_path / "no_repo" / "checkout")
    config = REPO / "experiments/configs/translate_standard.yaml"
    args = ["fit", "--config", str(config), *cli_overrides(pairs_file, cache_dir, tmp_path)]
    args += ["--data.dataset=spa-eng/spa.txt.gz", f"--data.data_dir={data_dir}"]
    with pytest.raises(SystemExit) as exit_:
        TranslationCLI(args=args)
    assert exit_.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("pytest: error: ") and "--data.data_dir" in last
    assert "--data-dir" not in last


def test_max_pairs_above_the_pair_file_is_refused_naming_it_as_the_user_gave_it(
    pairs_file, cache_dir, tmp_path, capsys
):
    """Python names the argument, translate_compare.py its --max-pairs (it said '--data:
    max_pairs=100000 is more than ...', an option it does not have)."""
    with pytest.raises(ValueError, match=r"^max_pairs must be at most the 240 pairs there "
                       r"are, got 100000"):  # fmt: skip
        tiny_data(pairs_file, cache_dir, max_pairs=100000).prepare_data()
    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import translate_compare
    finally:
        sys.path.pop(0)
    args = _tiny_compare_args(translate_compare, pairs_file, cache_dir, tmp_path)
    args.max_pairs = 100000
    with pytest.raises(SystemExit) as exit_:
        translate_compare.run_one(
            args, REPO / "experiments/configs/translate_standard.yaml", SEQUENCE_LENGTH
        )
    assert exit_.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == ("pytest: error: --max-pairs must be at most the 240 pairs there are, got "
                    "100000 (none: all of them)")  # fmt: skip


def test_cli_refuses_a_history_file_that_is_a_folder_or_one_of_its_inputs(
    pairs_file, cache_dir, tmp_path, capsys
):
    from tssdpa.translation.cli import TranslationCLI

    data, config = tmp_path / "pairs.txt.gz", tmp_path / "config.yaml"
    data.write_bytes(pairs_file.read_bytes())
    config.write_bytes((REPO / "experiments/configs/translate_standard.yaml").read_bytes())
    args = ["fit", "--config", str(config), *cli_overrides(pairs_file, cache_dir, tmp_path)]
    args += [f"--data.dataset={data}", "--test_after_fit=false"]
    for history, why in ((data, "would overwrite"), (config, "would overwrite"),
                         (tmp_path, "is a folder")):  # fmt: skip
        before = history.read_bytes() if history.is_file() else None
        with pytest.raises(SystemExit) as exit_:
            TranslationCLI(args=[*args, f"--history_file={history}"])
        assert exit_.value.code == 2 and why in capsys.readouterr().err
        assert before is None or history.read_bytes() == before


class _Unwritable:
    def __str__(self):
        raise OSError("disk full")


def test_history_and_comparison_files_are_written_whole_or_not_at_all(tmp_path):
    from tssdpa.translation.cli import write_history

    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import translate_compare
    finally:
        sys.path.pop(0)
    rows = [{"epoch": 0, "train_loss": 1.0}, {"epoch": 1, "train_loss": _Unwritable()}]
    results = [{"sequence_length": 8, "attention": "standard", "history": rows}]
    writers = {
        "history.csv": lambda path: write_history(rows, path),
        "epochs.csv": lambda path: translate_compare.write_epochs_csv(results, path),
    }
    for name, write in writers.items():
        path = tmp_path / name
        path.write_text("the last whole file\n")
        with pytest.raises(OSError, match="disk full"):
            write(path)
        assert path.read_text() == "the last whole file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(writers)


def test_the_final_checkpoint_is_written_whole_or_not_at_all(
    pairs_file, cache_dir, tmp_path, monkeypatch
):
    """Lightning moves a checkpoint from the system's temporary folder: a copy, which a crash
    cuts short, where that is another disk; here a write that fails half way."""
    from lightning.pytorch import Trainer

    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import translate_compare
    finally:
        sys.path.pop(0)

    def half_written(self, path, weights_only=False):
        Path(path).write_bytes(b"PK\x03\x04 half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(Trainer, "save_checkpoint", half_written)
    args = _tiny_compare_args(translate_compare, pairs_file, cache_dir, tmp_path)
    run_dir = tmp_path / "runs" / f"standard_L{SEQUENCE_LENGTH}"
    run_dir.mkdir(parents=True)
    (run_dir / "final.ckpt").write_bytes(b"the last whole checkpoint")
    config = REPO / "experiments/configs/translate_standard.yaml"
    with pytest.raises(OSError, match="disk full"):
        translate_compare.run_one(args, config, SEQUENCE_LENGTH)
    assert (run_dir / "final.ckpt").read_bytes() == b"the last whole checkpoint"
    assert [p.name for p in run_dir.iterdir()] == ["final.ckpt"]


def _tiny_compare_args(translate_compare, pairs_file, cache_dir, tmp_path):
    """``translate_compare``'s arguments for one epoch of a tiny model on 60 pairs."""
    init = "model.transformer.init_args"
    small = [f"data.dataset={pairs_file}", f"data.cache_dir={cache_dir}", "data.vocab_size=64",
             f"{init}.embed_dim=16", f"{init}.num_heads=2", f"{init}.head_dim=8",
             f"{init}.feedforward_dim=32", "trainer.accelerator=cpu",
             "trainer.enable_model_summary=false", "trainer.enable_progress_bar=false"]  # fmt: skip
    argv = ["--runs-dir", str(tmp_path / "runs"), "--max-epochs", "1", "--max-pairs", "60"]
    return translate_compare.parse_args([*argv, *(x for item in small for x in ("--set", item))])


def test_a_ddp_process_other_than_the_first_writes_no_final_checkpoint_and_goes_on(
    pairs_file, cache_dir, tmp_path, monkeypatch
):
    """Lightning saves a checkpoint from the first process only: another one's temporary file
    was never written, and renaming it raised FileNotFoundError in that process."""
    from lightning.pytorch import Trainer

    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import translate_compare
    finally:
        sys.path.pop(0)

    saved = []
    monkeypatch.setattr(Trainer, "is_global_zero", property(lambda self: False))
    monkeypatch.setattr(Trainer, "save_checkpoint", lambda self, path, weights_only=False:
                        saved.append(Path(path).name))  # fmt: skip
    args = _tiny_compare_args(translate_compare, pairs_file, cache_dir, tmp_path)
    config = REPO / "experiments/configs/translate_standard.yaml"
    translate_compare.run_one(args, config, SEQUENCE_LENGTH)
    assert saved == ["final.ckpt"]
    run_dir = tmp_path / "runs" / f"standard_L{SEQUENCE_LENGTH}"
    assert not (run_dir / "final.ckpt").exists()
    assert not [p for p in run_dir.iterdir() if p.name.endswith(".partial")]


def test_cli_refuses_a_checkpoint_it_cannot_use_before_running(
    pairs_file, cache_dir, tmp_path, capsys
):
    from tssdpa.translation.cli import TranslationCLI

    config = REPO / "experiments/configs/translate_standard.yaml"
    args = ["--config", str(config), *cli_overrides(pairs_file, cache_dir, tmp_path)]
    cli = TranslationCLI(args=["fit", *args, "--test_after_fit=false"])
    path = tmp_path / "model.ckpt"
    cli.trainer.save_checkpoint(path, weights_only=True)
    with (tmp_path / "pickle.ckpt").open("wb") as fh:
        pickle.dump({"state_dict": _RunsCode()}, fh)
    init = "--model.transformer.init_args"
    cases = [
        ([f"--ckpt_path={tmp_path / 'none.ckpt'}"], "no such file"),
        ([f"--ckpt_path={tmp_path / 'pickle.ckpt'}"], "does not load weights-only"),
        ([f"--ckpt_path={path}", f"{init}.feedforward_dim=48"], "holds another model"),
        ([f"--ckpt_path={path}", "--data.seed=1"], "_vocab is not the data module's"),
    ]
    for extra, message in cases:
        with pytest.raises(SystemExit) as exit_:
            TranslationCLI(args=["test", *args, "--weights_only=true", *extra])
        assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert not (Path.cwd() / "translator-pickle-ran").exists()
    TranslationCLI(args=["test", *args, "--weights_only=true", f"--ckpt_path={path}"])


def test_cli_has_no_predict_subcommand(capsys):
    from tssdpa.translation.cli import TranslationCLI

    config = REPO / "experiments/configs/translate_standard.yaml"
    with pytest.raises(SystemExit) as exit_:
        TranslationCLI(args=["predict", "--config", str(config)])
    assert exit_.value.code == 2 and "predict" in capsys.readouterr().err


def test_compare_script_writes_report(pairs_file, cache_dir, tmp_path):
    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import translate_compare
    finally:
        sys.path.pop(0)
    init = "model.transformer.init_args"
    sets = [
        f"data.dataset={pairs_file}",
        f"data.cache_dir={cache_dir}",
        "data.vocab_size=64",
        "data.batch_size=32",
        f"{init}.embed_dim=16",
        f"{init}.num_heads=2",
        f"{init}.head_dim=8",
        f"{init}.feedforward_dim=32",
        f"{init}.self_attention_sigma=1.0",
        f"{init}.cross_attention_sigma=1.0",
        "trainer.accelerator=cpu",
        "trainer.enable_model_summary=false",
    ]
    argv = [
        "--name",
        "tiny",
        "--output-dir",
        str(tmp_path / "out"),
        "--runs-dir",
        str(tmp_path / "runs"),
        "--max-epochs",
        "1",
        "--samples",
        "3",
        "--sequence-lengths",
        str(SEQUENCE_LENGTH),
        "--label",
        "tiny synthetic test",
    ]
    for item in sets:
        argv += ["--set", item]
    results = translate_compare.main(argv)
    assert [r["attention"] for r in results] == ["standard", "projection"]
    for r in results:  # each final checkpoint alone in its folder, whole
        assert torch.load(r["checkpoint"], weights_only=True)["state_dict"]
        assert not list(Path(r["checkpoint"]).parent.glob(".*.partial"))
    # Lightning's resolved config goes under --runs-dir, not the YAML's runs/translate/
    assert len(list((tmp_path / "runs").rglob("config.yaml"))) == 2
    out = tmp_path / "out"
    report = (out / "tiny.md").read_text()
    assert "tiny synthetic test" in report and "| English | reference |" in report
    assert (out / "tiny.png").stat().st_size > 0
    epochs = (out / "tiny_epochs.csv").read_text().splitlines()
    assert len(epochs) == 1 + 2 and epochs[1].startswith(f"{SEQUENCE_LENGTH},standard,0,")
    assert len((out / "tiny_samples.csv").read_text().splitlines()) == 1 + 2 * 3
    with pytest.raises(SystemExit):
        translate_compare.parse_args(["--set", "data.sequence_length=5"])

    # runs made apart (another length in another folder) merge into one report
    saved = json.loads((out / "tiny_results.json").read_text())
    for r in saved["results"]:
        r["sequence_length"] = SEQUENCE_LENGTH + 3
    saved["command"] = "python experiments/translate_compare.py --other-length"
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "tiny_results.json").write_text(json.dumps(saved))
    merged = tmp_path / "merged"
    argv = ["--name", "tiny", "--output-dir", str(merged), "--merge"]
    results = translate_compare.main([*argv, str(out), str(tmp_path / "other")])
    assert [r["sequence_length"] for r in results] == [SEQUENCE_LENGTH + 3] * 2 + [
        SEQUENCE_LENGTH
    ] * 2
    report = (merged / "tiny.md").read_text()
    assert "--other-length" in report and "--samples 3" in report
    assert f"- L={SEQUENCE_LENGTH + 3}: projection / standard" in report
    assert f"- L={SEQUENCE_LENGTH}: projection / standard" in report
    assert len((merged / "tiny_epochs.csv").read_text().splitlines()) == 1 + 4
    with pytest.raises(SystemExit):
        translate_compare.parse_args(["--merge", str(tmp_path / "runs")])


def test_compare_script_refuses_an_unreadable_pair_file_in_one_line(cache_dir, tmp_path, capsys):
    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import translate_compare
    finally:
        sys.path.pop(0)
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Go.\tVe.\nHi.\tHola señor.\n".encode("latin-1"))
    argv = ["--output-dir", str(tmp_path / "out"), "--runs-dir", str(tmp_path / "runs")]
    for item in (
        f"data.dataset={latin1}",
        f"data.cache_dir={cache_dir}",
        "trainer.accelerator=cpu",
    ):
        argv += ["--set", item]
    with pytest.raises(SystemExit) as exit_:
        translate_compare.main(argv)
    assert exit_.value.code == 2
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .endswith(f"{latin1}:2: not UTF-8 text (invalid continuation byte)")
    )


def test_compare_script_runs_each_attention_and_length_once(tmp_path, capsys):
    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import translate_compare
    finally:
        sys.path.pop(0)
    standard = REPO / "experiments/configs/translate_standard.yaml"
    for argv in (["--sequence-lengths", "8", "8"], ["--configs", str(standard), str(standard)]):
        with pytest.raises(SystemExit) as exit_:
            translate_compare.parse_args(argv)
        assert exit_.value.code == 2 and "once" in capsys.readouterr().err
    # two configs of one attention: refused before the second run trains
    other = tmp_path / "standard_too.yaml"
    other.write_text(standard.read_text())
    small = ["--set", "data.vocab_size=64", "--set", "model.transformer.init_args.embed_dim=16"]
    argv = ["--configs", str(standard), str(other), "--runs-dir", str(tmp_path / "runs")]
    args = translate_compare.parse_args([*argv, *small])
    done = [{"attention": "standard", "sequence_length": 20, "config": str(standard)}]
    with pytest.raises(SystemExit) as exit_:
        translate_compare.run_one(args, other, 20, done)
    assert exit_.value.code == 2 and "give each attention once" in capsys.readouterr().err


def test_compare_script_refuses_a_results_file_it_did_not_write_and_a_file_as_a_folder(
    tmp_path, capsys
):
    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import translate_compare
    finally:
        sys.path.pop(0)
    results = tmp_path / "runs" / "translation_results.json"
    results.parent.mkdir()
    for text in ('{"command": "x", "results": [', '{"command": "x", "environment": "e", '
                 '"results": [{"attention": "standard"}]}', "[]", "\udc80"):  # fmt: skip
        results.write_text(text, errors="surrogateescape")
        with pytest.raises(SystemExit) as exit_:
            translate_compare.parse_args(["--merge", str(results.parent)])
        assert exit_.value.code == 2
        assert "is not a results file that this script wrote" in capsys.readouterr().err
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    for option in ("--output-dir", "--runs-dir"):
        with pytest.raises(SystemExit) as exit_:
            translate_compare.parse_args([option, str(a_file)])
        assert exit_.value.code == 2 and "is a file, not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["runs/tiny", "", ".."])
def test_compare_script_refuses_a_name_with_a_folder_before_training(name, capsys):
    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import translate_compare
    finally:
        sys.path.pop(0)
    with pytest.raises(SystemExit) as exit_:
        translate_compare.parse_args(["--name", name])
    assert exit_.value.code == 2 and "--name must be a file name" in capsys.readouterr().err


@pytest.mark.parametrize(
    "attention, backend",
    [("standard", None), ("projection", "fused"), ("projection", "auto")],
)
def test_transformer_traces_as_one_graph_under_mixed_precision(attention, backend):
    # "auto" (the translation configs' backend) read the logits' error bound from the device
    # at every call: 14-18 graphs, so model.compile=true compiled projection piecemeal
    # A graph break splits torch.compile's graph (model.compile=true) at the break, and the
    # residual sub-layers, called with a different function at each site, then recompile
    # until Dynamo's limit and run eagerly: the compiled projection run of 2026-11-27 got no
    # faster for that reason.
    torch.manual_seed(0)
    model = TranslationTransformer(
        source_vocab_size=50, target_vocab_size=60, sequence_length=10, embed_dim=32,
        num_heads=4, head_dim=8, feedforward_dim=64, attention=attention,
        self_attention_sigma=0.5, cross_attention_sigma=0.5,
        normalize_qk=attention == "projection",
        **({"attention_backend": backend} if backend else {}),
    )  # fmt: skip
    source, target = torch.randint(1, 50, (3, 10)), torch.randint(1, 60, (3, 10))
    source[0, 6:], target[1, 4:] = 0, 0  # padding

    def step(source, target):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(source, target)

    torch._dynamo.reset()
    try:
        explained = torch._dynamo.explain(step)(source, target)
    finally:
        torch._dynamo.reset()
    assert explained.graph_break_count == 0, [b.reason for b in explained.break_reasons]
    assert explained.graph_count == 1


# --------------------------------------------------------------------------- real data


@pytest.mark.data("spa-eng/spa.txt.gz")
def test_real_data_split_and_no_leak(tmp_path):
    dm = TranslationDataModule(cache_dir=str(tmp_path))
    dm.setup()
    assert [len(dm.datasets[s]) for s in ("train", "val", "test")] == [83_276, 17_844, 17_844]
    train, val, test = dm.pairs("train"), dm.pairs("val"), dm.pairs("test")
    assert not set(train) & set(test) and not set(train) & set(val)
    assert len(set(train) | set(val) | set(test)) == 118_964
    train_source = {w for e, _ in train for w in standardize_english(e).split()}
    train_target = {w for _, s in train for w in standardize_spanish(s).split()}
    assert set(dm.source_vocab.tokens[2:]) <= train_source
    assert set(dm.target_vocab.tokens[2:]) <= train_target | {START_TOKEN, END_TOKEN}
    assert len(dm.target_vocab) == 15_000 and len(dm.source_vocab) <= 15_000
    test_only = {w for e, _ in test for w in standardize_english(e).split()} - train_source
    assert test_only and not test_only & set(dm.source_vocab.tokens)


# --------------------------------------------------------------------------- DDP


@pytest.mark.slow
def test_two_process_cpu_ddp_run(pairs_file, cache_dir, tmp_path):
    config = REPO / "experiments/configs/translate_projection.yaml"
    cmd = [
        sys.executable,
        str(REPO / "experiments/translate.py"),
        "fit",
        "--config",
        str(config),
        *cli_overrides(pairs_file, cache_dir, tmp_path),
        "--trainer.max_epochs=2",
        "--trainer.strategy=ddp",
        "--trainer.devices=2",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    history = (tmp_path / "history.csv").read_text().splitlines()
    assert len(history) == 1 + 2
    assert "test_bleu" in done.stdout + done.stderr


@pytest.mark.parametrize("contents", [b"source,target\nhi,hola\n", b"\x80\x02]q\x00."])
def test_load_checkpoint_refuses_any_file_torch_cannot_read_with_a_value_error(contents, tmp_path):
    # a CSV given as --ckpt_path was an IndexError traceback ("pop from empty list") from
    # torch's weights-only unpickler, past the ValueError the CLI turns into one line
    from tssdpa.translation.translator import load_checkpoint

    path = tmp_path / "not_a.ckpt"
    path.write_bytes(contents)
    with pytest.raises(ValueError, match="does not load weights-only|is not a Lightning"):
        load_checkpoint(path)
