"""Train the translation Transformer with standard and with projection attention and compare.

For every sequence length and every config (standard, projection by default) this trains with
``TranslationCLI`` (the same LightningCLI and YAML configs as ``experiments/translate.py``),
tests, and then writes to ``--output-dir``:

- ``<name>.md``          summary: accuracy, loss, BLEU, wall time, speed, sample translations;
- ``<name>_epochs.csv``  per-epoch metrics of every run;
- ``<name>.png``         accuracy and loss vs epoch for both attention kinds (paper's figure 2);
- ``<name>_samples.csv`` sample test-split translations of every run (paper's figure 3).

The paper's experiment on a GPU (see docs/translation.md):
    python experiments/translate_compare.py --sequence-lengths 20 10 \
        --set trainer.precision=bf16-mixed
Runs made apart (two lengths as two processes side by side on one GPU) give one report:
    python experiments/translate_compare.py --merge DIR_L20 DIR_L10 --output-dir docs/results
(each DIR holds the ``<name>_results.json`` that every run rewrites).
A reduced CPU smoke run:
    python experiments/translate_compare.py --name translation_cpu_smoke --max-pairs 3000 \
        --max-epochs 2 --set model.transformer.init_args.embed_dim=64 ...
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import platform
import shlex
import sys
import time
from pathlib import Path

import lightning
import torch

from tssdpa.files import replacing
from tssdpa.translation.cli import TranslationCLI, write_history

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CONFIGS = [
    REPO / "experiments/configs/translate_standard.yaml",
    REPO / "experiments/configs/translate_projection.yaml",
]
EPOCH_COLUMNS = [
    "sequence_length",
    "attention",
    "epoch",
    "train_loss",
    "val_loss",
    "train_accuracy",
    "val_accuracy",
    "train_keras_accuracy",
    "val_keras_accuracy",
    "epoch_time_s",
    "tokens_per_s",
]

#: what each run's entry of <name>_results.json holds (run_one's return value)
RESULT_KEYS = {"attention", "sequence_length", "config", "history", "test", "fit_time_s",
               "train_time_s", "samples", "precision", "n_pairs", "transformer"}  # fmt: skip


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--configs",
        nargs="+",
        type=Path,
        default=DEFAULT_CONFIGS,
        help="LightningCLI YAML configs to compare (default: standard and projection)",
    )
    p.add_argument(
        "--sequence-lengths",
        nargs="+",
        type=int,
        default=[20],
        help="sequence lengths to run (20: Keras example, 10: the paper)",
    )
    p.add_argument("--data-dir", default=None, help="folder holding spa-eng/spa.txt.gz")
    p.add_argument(
        "--max-pairs",
        type=int,
        default=None,
        help="use only this many shuffled pairs (reduced runs)",
    )
    p.add_argument("--max-epochs", type=int, default=None, help="override trainer.max_epochs")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra LightningCLI override, e.g. trainer.precision=bf16-mixed (repeatable)",
    )
    p.add_argument(
        "--output-dir",
        type=Path,
        default=REPO / "docs/results",
        help="where the report, CSVs and figure go",
    )
    p.add_argument("--name", default="translation", help="file stem of the outputs")
    p.add_argument(
        "--runs-dir",
        type=Path,
        default=REPO / "runs/translate_compare",
        help="where the final checkpoints (and Lightning's resolved config.yaml) go",
    )
    p.add_argument("--samples", type=int, default=10, help="sample translations per run")
    p.add_argument(
        "--label",
        default=None,
        help="note printed at the top of the report (e.g. 'reduced CPU smoke run')",
    )
    p.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        default=None,
        metavar="DIR",
        help="train nothing: one report from the <name>_results.json of these output folders",
    )
    args = p.parse_args(argv)
    for folder in args.merge or []:
        if not (folder / f"{args.name}_results.json").is_file():
            p.error(f"--merge: {folder} holds no {args.name}_results.json")
        # Read here against the layout main() writes: a cut-short or edited file was a
        # JSONDecodeError or KeyError traceback from the middle of the report.
        path = folder / f"{args.name}_results.json"
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            runs = saved["results"]
            valid = isinstance(saved["command"], str) and isinstance(saved["environment"], str)
            valid = valid and isinstance(runs, list) and runs != []
            valid = valid and all(isinstance(r, dict) and RESULT_KEYS <= r.keys() for r in runs)
        except (ValueError, KeyError, TypeError):  # JSONDecodeError and UnicodeDecodeError too
            valid = False
        if not valid:
            p.error(f"--merge: {path} is not a results file that this script wrote")
    for name, folder in (("--output-dir", args.output_dir), ("--runs-dir", args.runs_dir)):
        if folder.exists() and not folder.is_dir():
            p.error(f"{name}: {folder} is a file, not a folder")
    for cfg in args.configs:
        if not cfg.is_file():
            p.error(f"--configs: {cfg} does not exist")
    for length in args.sequence_lengths:
        if length < 1:
            p.error(f"--sequence-lengths: must be positive, got {length}")
    if len(set(args.sequence_lengths)) < len(args.sequence_lengths):
        p.error(f"--sequence-lengths: each length once, got {args.sequence_lengths}")
    if len({c.resolve() for c in args.configs}) < len(args.configs):
        p.error("--configs: each config once")
    if args.max_pairs is not None and args.max_pairs < 3:
        p.error(f"--max-pairs must be at least 3, got {args.max_pairs}")
    if args.max_epochs is not None and args.max_epochs < 1:
        p.error(f"--max-epochs must be positive, got {args.max_epochs}")
    if args.samples < 0:
        p.error(f"--samples must be >= 0, got {args.samples}")
    # The outputs are named <output-dir>/<name>_...: a name with a folder in it failed only
    # when the first report was written, after the first training run.
    if not args.name or Path(args.name).name != args.name or args.name in (".", ".."):
        p.error(f"--name must be a file name without a folder, got {args.name!r}")
    for item in args.set:
        if "=" not in item:
            p.error(f"--set expects KEY=VALUE, got {item!r}")
        if item.split("=", 1)[0].strip() in ("data.sequence_length", "data.max_pairs"):
            p.error(f"--set {item!r}: use --sequence-lengths / --max-pairs instead")
    return args


def cli_args(args: argparse.Namespace, config: Path, sequence_length: int) -> list[str]:
    """LightningCLI arguments of one run: the YAML plus the comparison's overrides."""
    out = [
        "--config",
        str(config),
        f"--data.sequence_length={sequence_length}",
        "--trainer.logger=false",
        "--trainer.callbacks=[]",
        "--trainer.enable_checkpointing=false",
        "--history_file=null",
        "--test_after_fit=false",
        # what Lightning writes (the resolved config.yaml) goes under --runs-dir too, not the
        # YAML's runs/translate/ (a run of the tests overwrote a real run's config there)
        f"--trainer.default_root_dir={args.runs_dir / config.stem}_L{sequence_length}",
    ]
    if args.data_dir is not None:
        out.append(f"--data.data_dir={args.data_dir}")
    if args.max_pairs is not None:
        out.append(f"--data.max_pairs={args.max_pairs}")
    if args.max_epochs is not None:
        out.append(f"--trainer.max_epochs={args.max_epochs}")
    out += [f"--{item}" for item in args.set]
    return out


def run_one(
    args: argparse.Namespace, config: Path, sequence_length: int, done: list[dict] = ()
) -> dict:
    """Train, test and sample one configuration; returns its results. ``done``: the results
    of this invocation so far (a run of the same attention and length is refused)."""
    saved_argv, sys.argv = sys.argv, sys.argv[:1]  # the CLI reads only the arguments given
    try:
        # --max-pairs is given to the CLI as --data.max_pairs: its messages name ours
        names = {"max_pairs": "--max-pairs"} if args.max_pairs is not None else {}
        names["data_dir"] = "--data-dir"  # given to the CLI as --data.data_dir
        cli_argv = cli_args(args, config, sequence_length)
        cli = TranslationCLI(args=cli_argv, run=False, option_names=names)
    finally:
        sys.argv = saved_argv
    system, datamodule, trainer = cli.model, cli.datamodule, cli.trainer
    attention = system.transformer.config["attention"]
    # Runs are stored and reported by attention and length: a second one (the same length
    # twice, or two configs of one attention) overwrote the first's checkpoint and history
    # while its results still pointed there, and the report kept one of the two.
    for other in done:
        if (other["attention"], other["sequence_length"]) == (attention, sequence_length):
            print(
                f"translate_compare.py: error: {config} runs {attention} attention at L = "
                f"{sequence_length}, as {other['config']} did: give each attention once",
                file=sys.stderr,
            )
            raise SystemExit(2)
    # What LightningCLI runs before fit: an unreadable pair file is one line and exit code 2
    # here too, not a traceback from inside Trainer.fit.
    cli.before_fit()
    start = time.perf_counter()
    trainer.fit(system, datamodule=datamodule)
    fit_time = time.perf_counter() - start
    test = trainer.test(system, datamodule=datamodule, verbose=False)[0]
    run_dir = args.runs_dir / f"{attention}_L{sequence_length}"
    run_dir.mkdir(parents=True, exist_ok=True)
    # Whole or not at all, as the other outputs: Lightning writes it in the system's temporary
    # folder and moves it here, a copy (cut short by a crash) where that is another disk. Only
    # the first process of a DDP run writes it; the others take part in its barrier alone (a
    # temporary file they never wrote was a FileNotFoundError there)
    if trainer.is_global_zero:
        with replacing(run_dir / "final.ckpt") as tmp:
            trainer.save_checkpoint(tmp, weights_only=True)
    else:
        trainer.save_checkpoint(run_dir / "final.ckpt", weights_only=True)
    write_history(system.history, run_dir / "history.csv")
    test_range = datamodule.splits["test"]
    samples = []
    for index in list(test_range)[: args.samples]:
        english = datamodule.arrays["english"][index]
        samples.append(
            {
                "index": index,
                "english": english,
                "reference": datamodule.reference(index),
                "translation": system.test_hypotheses.get(index, ""),
            }
        )
    precision = str(trainer.precision)
    print(
        f"[translate_compare] L={sequence_length} {attention}: fit {fit_time:.1f} s, "
        + ", ".join(f"{k} {v:.4f}" for k, v in test.items()),
        flush=True,
    )
    return {
        "attention": attention,
        "sequence_length": sequence_length,
        "config": str(config),
        "history": list(system.history),
        "test": {k: float(v) for k, v in test.items()},
        "fit_time_s": fit_time,
        "train_time_s": sum(r.get("epoch_time_s", 0.0) for r in system.history),
        "samples": samples,
        "precision": precision,
        "n_pairs": [len(datamodule.splits[s]) for s in ("train", "val", "test")],
        "transformer": dict(system.transformer.config),
        "checkpoint": str(run_dir / "final.ckpt"),
    }


def write_epochs_csv(results: list[dict], path: Path) -> None:
    with replacing(path) as tmp, tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=EPOCH_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for r in results:
            for row in r["history"]:
                writer.writerow(
                    {"sequence_length": r["sequence_length"], "attention": r["attention"], **row}
                )


def write_samples_csv(results: list[dict], path: Path) -> None:
    with replacing(path) as tmp, tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(
            fh,
            fieldnames=[
                "sequence_length",
                "attention",
                "index",
                "english",
                "reference",
                "translation",
            ],
        )
        writer.writeheader()
        for r in results:
            for s in r["samples"]:
                writer.writerow(
                    {"sequence_length": r["sequence_length"], "attention": r["attention"], **s}
                )


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    lengths = sorted({r["sequence_length"] for r in results}, reverse=True)
    fig, axes = plt.subplots(len(lengths), 2, figsize=(11, 4 * len(lengths)), squeeze=False)
    styles = {"standard": "-", "projection": "--"}
    for row, length in enumerate(lengths):
        ax_acc, ax_loss = axes[row]
        for r in (r for r in results if r["sequence_length"] == length):
            epochs = [h["epoch"] + 1 for h in r["history"]]
            ls = styles.get(r["attention"], ":")
            for split, color in (("train", "tab:blue"), ("val", "tab:orange")):
                label = f"{r['attention']} {split}"
                ax_acc.plot(
                    epochs,
                    [h.get(f"{split}_accuracy") for h in r["history"]],
                    ls,
                    color=color,
                    marker="o",
                    ms=3,
                    label=label,
                )
                ax_loss.plot(
                    epochs,
                    [h.get(f"{split}_loss") for h in r["history"]],
                    ls,
                    color=color,
                    marker="o",
                    ms=3,
                    label=label,
                )
        ax_acc.set(
            title=f"token accuracy (padding excluded), L={length}",
            xlabel="epoch",
            ylabel="accuracy",
        )
        ax_loss.set(title=f"cross-entropy loss, L={length}", xlabel="epoch", ylabel="loss")
        for ax in (ax_acc, ax_loss):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    fig.tight_layout()
    with replacing(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)


def environment(results: list[dict]) -> str:
    if torch.cuda.is_available():
        device = torch.cuda.get_device_name(0)
    else:
        threads = torch.get_num_threads()
        device = (
            f"CPU ({platform.processor() or platform.machine()}, "
            f"{threads} thread{'s' if threads != 1 else ''})"
        )
    precisions = sorted({r["precision"] for r in results})
    return (
        f"{device}; torch {torch.__version__}; lightning {lightning.__version__}; "
        f"precision {', '.join(precisions)}"
    )


def _fmt(x, digits=4) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def write_report(
    results: list[dict], args: argparse.Namespace, commands: list[str], env: str, path: Path
) -> None:
    stem = args.name
    lines = [f"# Translation: standard vs projection attention ({stem})", ""]
    if args.label:
        lines += [f"> **{args.label}**", ""]
    lines += [
        f"Generated {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')} by "
        "`experiments/translate_compare.py`. Reproduce with:",
        "",
        "```",
        *commands,
        "```",
        "",
        f"Environment: {env}.",
        "",
    ]
    pairs = sorted({tuple(r["n_pairs"]) for r in results})
    lines += [
        "Pairs (train / val / test): "
        + "; ".join(" / ".join(f"{n:,}" for n in p) for p in pairs)
        + ".",
        "",
    ]
    lines += [
        "| L | attention | epochs | train time (s) | fit wall (s) | tokens/s | val acc | "
        "val Keras acc | test loss | test acc | test Keras acc | test BLEU |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        last = r["history"][-1] if r["history"] else {}
        rates = [h["tokens_per_s"] for h in r["history"] if "tokens_per_s" in h]
        t = r["test"]
        lines.append(
            f"| {r['sequence_length']} | {r['attention']} | {len(r['history'])} | "
            f"{r['train_time_s']:.1f} | {r['fit_time_s']:.1f} | "
            f"{(sum(rates) / len(rates)) if rates else 0:,.0f} | "
            f"{_fmt(last.get('val_accuracy'))} | {_fmt(last.get('val_keras_accuracy'))} | "
            f"{_fmt(t.get('test_loss'))} | {_fmt(t.get('test_accuracy'))} | "
            f"{_fmt(t.get('test_keras_accuracy'))} | {_fmt(t.get('test_bleu'), 2)} |"
        )
    lines.append("")
    for length in sorted({r["sequence_length"] for r in results}, reverse=True):
        by_kind = {r["attention"]: r for r in results if r["sequence_length"] == length}
        if {"standard", "projection"} <= by_kind.keys():
            s, p = by_kind["standard"], by_kind["projection"]
            ratio = p["train_time_s"] / s["train_time_s"] if s["train_time_s"] else float("nan")
            fit_ratio = p["fit_time_s"] / s["fit_time_s"]
            gap = 100 * (s["test"]["test_accuracy"] - p["test"]["test_accuracy"])
            lines.append(
                f"- L={length}: projection / standard training time = {ratio:.2f} (whole fit "
                f"{fit_ratio:.2f}); test token accuracy standard − projection = {gap:+.2f} points."
            )
    lines += ["", "Model settings:", ""]
    for r in results:
        c = r["transformer"]
        sigma = (
            f"σ self {c['self_attention_sigma']}, cross {c['cross_attention_sigma']}"
            f"{' (learned)' if c['learn_sigma'] else ''}"
            f"{', unit-length q and k' if c.get('normalize_qk') else ''}, "
            f"backend {c['attention_backend']}, "
            if c["attention"] == "projection"
            else ""
        )
        lines.append(
            f"- L={r['sequence_length']} {r['attention']}: embed {c['embed_dim']}, "
            f"{c['num_heads']} heads × {c['head_dim'] or c['embed_dim'] // c['num_heads']}, "
            f"feed-forward {c['feedforward_dim']}, output dropout {c['output_dropout']}, "
            f"{sigma}padding mask {'on' if c['padding_mask'] else 'off'}, "
            f"value {c['attention_value']}, output layer {c['target_vocab_size']:,} entries "
            "(configured vocabulary size; a small corpus fills fewer)."
        )
    lines += [
        "",
        "Definitions: *train time* sums the training-loop wall time of each epoch (validation "
        "excluded); *fit wall* is the whole `Trainer.fit` call including validation; "
        "*tokens/s* counts real (non-padding) target tokens per second of training time; "
        "*acc* is token accuracy over real target tokens; *Keras acc* counts padding "
        "positions too; BLEU is sacrebleu corpus BLEU of greedy translations against the "
        "standardised (lower-cased, punctuation-free) Spanish references.",
        "",
        f"![accuracy and loss vs epoch]({stem}.png)",
        "",
        f"Per-epoch metrics: [`{stem}_epochs.csv`]({stem}_epochs.csv); sample translations: "
        f"[`{stem}_samples.csv`]({stem}_samples.csv).",
        "",
        "## Sample translations (test split)",
        "",
    ]
    for length in sorted({r["sequence_length"] for r in results}, reverse=True):
        runs = [r for r in results if r["sequence_length"] == length]
        if not runs or not runs[0]["samples"]:
            continue
        lines += [f"Sequence length {length}:", ""]
        header = "| English | reference | " + " | ".join(r["attention"] for r in runs) + " |"
        lines += [header, "|" + "---|" * (2 + len(runs))]
        for i, sample in enumerate(runs[0]["samples"]):
            cells = [_md_cell(sample["english"]), _md_cell(sample["reference"])]
            cells += [_md_cell(r["samples"][i]["translation"]) for r in runs]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    with replacing(path) as tmp:
        tmp.write_text("\n".join(lines))


def write_outputs(
    results: list[dict], args: argparse.Namespace, commands: list[str], env: str
) -> None:
    # Each file whole or not at all (tssdpa.files.replacing): they are rewritten after every
    # run, and a run cut off by a time limit mid-write had left a truncated report or CSV in
    # place of the last whole one.
    out = args.output_dir / args.name
    write_epochs_csv(results, out.with_name(f"{args.name}_epochs.csv"))
    write_samples_csv(results, out.with_name(f"{args.name}_samples.csv"))
    plot(results, out.with_name(f"{args.name}.png"))
    write_report(results, args, commands, env, out.with_name(f"{args.name}.md"))
    print(f"wrote {out}.md, {out}_epochs.csv, {out}_samples.csv, {out}.png", flush=True)


def merge(args: argparse.Namespace) -> list[dict]:
    """One report from the results that separate invocations saved (longest length first)."""
    saved = [json.loads((d / f"{args.name}_results.json").read_text()) for d in args.merge]
    envs = list(dict.fromkeys(s["environment"] for s in saved))
    results = sorted((r for s in saved for r in s["results"]), key=lambda r: -r["sequence_length"])
    write_outputs(results, args, [s["command"] for s in saved], "; ".join(envs))
    return results


def main(argv: list[str] | None = None) -> list[dict]:
    args = parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    if args.merge:
        return merge(args)
    argv = sys.argv[1:] if argv is None else argv
    command = shlex.join(["python", "experiments/translate_compare.py", *argv])
    results = []
    for length in args.sequence_lengths:
        for config in args.configs:
            results.append(run_one(args, config, length, results))
            # Rewritten after every run: a run cut off by a time limit (a device lease) still
            # leaves the report of the runs that finished.
            env = environment(results)
            write_outputs(results, args, [command], env)
            saved = {"command": command, "environment": env, "results": results}
            with replacing(args.output_dir / f"{args.name}_results.json") as tmp:
                tmp.write_text(json.dumps(saved, indent=1, default=str))
    return results


if __name__ == "__main__":
    main()
