"""LightningModule that trains a :class:`TranslationTransformer` (the "system").

Per epoch it logs loss and two token accuracies: ``accuracy`` over real (non-padding) target
tokens and ``keras_accuracy`` over every target position, padding included, which is what
``metrics=["accuracy"]`` reports in the Keras example. It also logs the training wall time of
the epoch and the target tokens processed per second. Testing adds BLEU (sacrebleu, corpus
level) of greedy translations of the test split against its standardised references.
"""

from __future__ import annotations

import time

import lightning as L
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torchmetrics import Metric

from tssdpa.checks import check_choice
from tssdpa.translation.model import TranslationTransformer
from tssdpa.translation.text import END_TOKEN, PAD_ID, START_TOKEN

# Sums kept per stage and epoch: loss summed over the positions the loss counts, those
# positions, real (non-padding) target tokens, correct predictions among them, correct
# predictions over all positions, and all positions.
_COUNTS = (
    "loss_sum",
    "loss_positions",
    "real_tokens",
    "correct",
    "correct_with_padding",
    "positions",
)


class EpochTotals(Metric):
    """Float64 sums of a fixed set of per-batch counts, summed across processes on compute.

    One tensor update per step (instead of one metric per count) keeps the per-step overhead
    to a single small kernel.
    """

    full_state_update = False

    def __init__(self, names: tuple[str, ...]):
        super().__init__()
        self.names = names
        self.add_state("totals", torch.zeros(len(names), dtype=torch.float64), "sum")

    def update(self, values: Tensor) -> None:
        self.totals += values.detach().to(self.totals.dtype)

    def compute(self) -> dict[str, Tensor]:
        return dict(zip(self.names, self.totals))


_STAGES = ("train", "val", "test")


class TranslationSystem(L.LightningModule):
    """Training, evaluation and checkpointing around an injected translation model.

    Args:
        transformer: The sequence-to-sequence model.
        learning_rate: RMSprop learning rate (Keras default 1e-3).
        rmsprop_alpha: RMSprop smoothing constant (Keras ``rho`` = 0.9).
        rmsprop_eps: RMSprop epsilon (Keras default 1e-7).
        loss_counts_padding: Average the loss over padding positions too (as an unmasked Keras
            loss would); by default padding positions are ignored.
        bleu: Decode the test split greedily and log ``test_bleu``.
        compile: ``torch.compile`` the transformer's teacher-forced forward.
        epoch_seed: Reseed the RNG (dropout) at every epoch start from (epoch_seed, epoch,
            rank), so that a run resumed from an epoch-end checkpoint reproduces an
            uninterrupted one. ``None`` leaves the RNG alone.
    """

    def __init__(
        self,
        transformer: TranslationTransformer,
        learning_rate: float = 1e-3,
        rmsprop_alpha: float = 0.9,
        rmsprop_eps: float = 1e-7,
        loss_counts_padding: bool = False,
        bleu: bool = True,
        compile: bool = False,
        epoch_seed: int | None = 0,
    ):
        super().__init__()
        if learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {learning_rate}")
        for name, flag in (("loss_counts_padding", loss_counts_padding), ("bleu", bleu),
                           ("compile", compile)):  # fmt: skip
            check_choice(flag, name, (True, False))
        if not isinstance(transformer, TranslationTransformer):
            raise TypeError(
                f"transformer must be a TranslationTransformer, got {type(transformer).__name__}"
            )
        self.save_hyperparameters(ignore=["transformer"])
        self.transformer = transformer
        # Kept out of the module tree (and so out of state_dict): the compiled wrapper shares
        # the transformer's parameters.
        self.__dict__["_forward_fn"] = torch.compile(transformer) if compile else transformer
        self.counts = nn.ModuleDict({f"{stage}_counts": EpochTotals(_COUNTS) for stage in _STAGES})
        self.history: list[dict[str, float]] = []
        self._val_epoch: dict[str, float] = {}
        self._epoch_start: float | None = None
        self._epoch_train_time: float | None = None
        self.test_hypotheses: dict[int, str] = {}

    def setup(self, stage: str) -> None:
        # Lightning sets the data module up first. A vocabulary larger than the model's
        # tables, or rows longer than its positions, failed inside the first step
        # ("IndexError: index out of range in self").
        datamodule = getattr(self.trainer, "datamodule", None)
        if datamodule is None or getattr(datamodule, "arrays", None) is None:
            return
        needs = {
            "source_vocab_size": len(datamodule.source_vocab),
            "target_vocab_size": len(datamodule.target_vocab),
            "sequence_length": datamodule.sequence_length,
        }
        for name, needed in needs.items():
            if self.transformer.config[name] < needed:
                raise ValueError(
                    f"the transformer's {name} {self.transformer.config[name]} is below the "
                    f"data module's {needed}"
                )

    # -- steps ------------------------------------------------------------------------------
    def forward(self, source: Tensor, target_input: Tensor) -> Tensor:
        return self.__dict__["_forward_fn"](source, target_input)

    def _shared_step(self, batch, stage: str) -> Tensor:
        source, target, _ = batch
        target_input, labels = target[:, :-1], target[:, 1:]
        logits = self(source, target_input).float()  # fp32 loss even under bf16 autocast
        token_loss = F.cross_entropy(logits.transpose(1, 2), labels, reduction="none")  # (B, T)
        real = labels != PAD_ID
        n_real = real.sum()
        if self.hparams.loss_counts_padding:
            loss = token_loss.mean()
        else:
            loss = (token_loss * real).sum() / n_real.clamp_min(1)
        with torch.no_grad():
            hit = logits.argmax(dim=-1) == labels
            # torch.full, not torch.tensor: no host-to-device copy (and stream sync) per step.
            n_positions = torch.full((), labels.numel(), device=labels.device)
            if self.hparams.loss_counts_padding:
                loss_sum, loss_positions = token_loss.sum(), n_positions
            else:
                loss_sum, loss_positions = (token_loss * real).sum(), n_real
            values = [loss_sum, loss_positions, n_real, (hit & real).sum(), hit.sum(), n_positions]
            self.counts[f"{stage}_counts"].update(torch.stack([v.double() for v in values]))
        return loss

    def training_step(self, batch, batch_idx: int) -> Tensor:
        return self._shared_step(batch, "train")

    def validation_step(self, batch, batch_idx: int) -> None:
        self._shared_step(batch, "val")

    def test_step(self, batch, batch_idx: int) -> None:
        self._shared_step(batch, "test")
        if self.hparams.bleu:
            source, _, index = batch
            vocab = self.trainer.datamodule.target_vocab
            generated = self.transformer.greedy_decode(
                source, vocab.index[START_TOKEN], vocab.index[END_TOKEN], vocab_size=len(vocab)
            )
            for i, ids in zip(index.tolist(), generated.tolist()):
                self.test_hypotheses[i] = vocab.decode(ids)

    def configure_optimizers(self):
        return torch.optim.RMSprop(
            self.parameters(),
            lr=self.hparams.learning_rate,
            alpha=self.hparams.rmsprop_alpha,
            eps=self.hparams.rmsprop_eps,
        )

    # -- epoch bookkeeping --------------------------------------------------------------------
    def _epoch_metrics(self, stage: str) -> dict[str, float]:
        totals = self.counts[f"{stage}_counts"]
        counts = {name: value.float() for name, value in totals.compute().items()}
        totals.reset()
        values = {
            f"{stage}_loss": counts["loss_sum"] / counts["loss_positions"].clamp_min(1),
            f"{stage}_accuracy": counts["correct"] / counts["real_tokens"].clamp_min(1),
            f"{stage}_keras_accuracy": counts["correct_with_padding"]
            / counts["positions"].clamp_min(1),
        }
        for name, value in values.items():
            # Already summed across processes; sync_dist only averages identical values.
            self.log(name, value, prog_bar=name.endswith("accuracy"), sync_dist=True)
        return {name: float(value) for name, value in values.items()}

    def _synchronize(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def on_train_epoch_start(self) -> None:
        if self.hparams.epoch_seed is not None:
            seed = (self.hparams.epoch_seed * 1_000_003 + self.current_epoch) * 1009
            torch.manual_seed(seed + self.global_rank)
        self._synchronize()
        self._epoch_start = time.perf_counter()
        self._epoch_train_time = None

    def on_train_batch_end(self, outputs, batch, batch_idx: int) -> None:
        if batch_idx == self.trainer.num_training_batches - 1:
            self._synchronize()
            self._epoch_train_time = time.perf_counter() - self._epoch_start

    def on_validation_epoch_end(self) -> None:
        metrics = self._epoch_metrics("val")
        if not self.trainer.sanity_checking:
            self._val_epoch = metrics

    def on_train_epoch_end(self) -> None:
        train_tokens = float(self.counts["train_counts"].compute()["real_tokens"])
        metrics = self._epoch_metrics("train")
        row: dict[str, float] = {"epoch": self.current_epoch, **metrics, **self._val_epoch}
        if self._epoch_train_time is not None:
            elapsed = float(
                self.trainer.strategy.reduce(
                    torch.tensor(self._epoch_train_time, device=self.device), reduce_op="max"
                )
            )
            row["epoch_time_s"] = elapsed
            row["tokens_per_s"] = train_tokens / elapsed
            self.log("epoch_time_s", elapsed, sync_dist=True)
            self.log("tokens_per_s", row["tokens_per_s"], sync_dist=True)
        self._val_epoch = {}
        self.history.append(row)

    def on_test_epoch_start(self) -> None:
        self.test_hypotheses = {}

    def on_test_epoch_end(self) -> None:
        self._epoch_metrics("test")
        if not self.hparams.bleu:
            return
        hypotheses = self.test_hypotheses
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            gathered: list[dict[int, str]] = [{} for _ in range(self.trainer.world_size)]
            torch.distributed.all_gather_object(gathered, hypotheses)
            hypotheses = {k: v for part in gathered for k, v in part.items()}
        self.test_hypotheses = hypotheses
        bleu = corpus_bleu(hypotheses, self.trainer.datamodule.reference)
        self.log("test_bleu", bleu, sync_dist=True)

    # -- checkpoints --------------------------------------------------------------------------
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        translation: dict = {
            "transformer_config": dict(self.transformer.config),
            "history": list(self.history),
        }
        datamodule = getattr(self.trainer, "datamodule", None) if self._trainer else None
        if datamodule is not None and getattr(datamodule, "arrays", None) is not None:
            translation["source_vocab"] = list(datamodule.source_vocab.tokens)
            translation["target_vocab"] = list(datamodule.target_vocab.tokens)
        checkpoint["translation"] = translation

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        translation = checkpoint.get("translation", {})
        # Lightning sets the data module up before it restores a checkpoint.
        datamodule = getattr(self.trainer, "datamodule", None) if self._trainer else None
        check_vocabularies(translation, datamodule)
        self.history = list(translation.get("history", []))


def check_vocabularies(translation: dict, datamodule) -> None:
    """``ValueError`` where a checkpoint's vocabularies (its ``translation`` entry) are not
    those of a set-up ``datamodule``. A checkpoint tested or resumed on data vectorised
    otherwise (another seed, max_pairs, vocab_size or pair file) read every id as another
    word: silently wrong metrics and BLEU."""
    if datamodule is None or getattr(datamodule, "arrays", None) is None:
        return
    for name in ("source_vocab", "target_vocab"):
        saved = translation.get(name)
        if saved is not None and list(saved) != getattr(datamodule, name).tokens:
            raise ValueError(
                f"the checkpoint's {name} is not the data module's: it was trained on "
                "data vectorised with other settings (seed, max_pairs, vocab_size, "
                "dataset); use those"
            )


def corpus_bleu(hypotheses: dict[int, str], reference) -> float:
    """Corpus BLEU (sacrebleu, 13a tokenisation) of ``hypotheses[i]`` against ``reference(i)``."""
    try:
        import sacrebleu
    except ImportError as err:  # an optional dependency (extra "translation")
        raise ImportError(
            "BLEU needs sacrebleu: pip install 'tssdpa[translation]', or pass --model.bleu false"
        ) from err

    if not hypotheses:
        raise ValueError("no hypotheses to score")
    keys = sorted(hypotheses)
    refs = [reference(i) for i in keys]
    return float(sacrebleu.corpus_bleu([hypotheses[i] for i in keys], [refs]).score)
