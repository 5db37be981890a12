"""Learned projection filters and forecasters (torch ``nn.Module`` + Lightning).

Three tiers:

* plain modules -- :class:`DenoisingNet` (causal, windowed, stack of projection-attention
  :class:`~tssdpa.nn.EncoderBlock`, residual bypass from input to output) and
  :class:`ForecastingNet` (DLinear-style linear head on a trend/seasonal split plus a
  projection-attention residual over patches of the look-back window; the attention head starts
  at zero so an untrained model is exactly the linear one);
* LightningModules, in :mod:`tssdpa.filters.systems` -- :class:`DenoisingSystem` (trained on
  windows of (noisy, clean) pairs) and :class:`ForecastingSystem` (windows of (past, future));
* estimators -- :class:`LearnedProjectionFilter` and :class:`LearnedProjectionForecaster` with
  the fit / filter / forecast / save interface of the nonparametric ones, running a Lightning
  ``Trainer`` (progress bar, early stopping on a time-ordered validation split, checkpoints,
  ``accelerator="auto"``) underneath.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from tssdpa.filters._io import ParamsMixin, _jsonable, as_2d, restore
from tssdpa.filters.projection import noise_scale
from tssdpa.nn import EncoderBlock

__all__ = [
    "DenoisingNet",
    "ForecastingNet",
    "LearnedProjectionFilter",
    "LearnedProjectionForecaster",
    "RIDGE_GRID",
    "ridge_linear_init",
]


# =============================================================================== modules
class DenoisingNet(nn.Module):
    """Causal projection-attention denoiser: y = x + head(blocks(embed(x))).

    Every block attends causally over a window of ``window`` steps, so the output at t depends
    on the last ``receptive_field = num_layers * (window - 1) + 1`` samples only. NaN inputs
    are replaced by 0 and masked as keys in every layer.
    """

    def __init__(
        self,
        n_channels: int,
        d_model: int = 32,
        num_heads: int = 4,
        num_layers: int = 2,
        dim_feedforward: int = 64,
        window: int = 16,
        sigma: float = 2.0,
        learn_sigma: bool = True,
        decay: float | None = 0.9,
        learn_decay: bool = True,
        dropout: float = 0.0,
    ):
        super().__init__()
        if window is None or window < 1:
            raise ValueError("window must be an int >= 1 (it bounds the receptive field)")
        self.n_channels, self.window, self.num_layers = n_channels, window, num_layers
        self.embed = nn.Linear(n_channels, d_model)
        att = dict(
            sigma=sigma,
            learn_sigma=learn_sigma,
            window=window,
            decay=decay,
            learn_decay=learn_decay and decay is not None,
        )
        self.blocks = nn.ModuleList(
            EncoderBlock(d_model, num_heads, dim_feedforward, dropout, attention_kwargs=att)
            for _ in range(num_layers)
        )
        self.head = nn.Linear(d_model, n_channels)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    @property
    def receptive_field(self) -> int:
        return self.num_layers * (self.window - 1) + 1

    def forward(self, x: Tensor) -> Tensor:
        """x (B, T, C) -> (B, T, C); causal."""
        missing = torch.isnan(x)
        x0 = torch.where(missing, torch.zeros_like(x), x)
        pad = missing.any(dim=-1)
        h = self.embed(x0)
        for blk in self.blocks:
            h = blk(h, key_padding_mask=pad if pad.any() else None, is_causal=True)
        return x0 + self.head(h)


class ForecastingNet(nn.Module):
    """Direct multi-step forecaster: DLinear heads + projection-attention residual.

    Input (B, lookback, C) -> output (B, horizon, C). With ``channel_independent`` every
    channel is a separate univariate sequence sharing the weights (as in DLinear / PatchTST);
    otherwise patches carry all channels. The attention branch always sees the window minus
    its last value (the shape, not the level); the linear branch does too with
    ``normalize="last"`` (NLinear, the default) or sees the raw window with ``"none"`` (DLinear).
    The choice is kept in the buffer ``level_norm`` (1 or 0), so a checkpoint restores it.
    The linear branch shares its weights across channels in both settings.
    """

    def __init__(
        self,
        lookback: int,
        horizon: int,
        n_channels: int,
        channel_independent: bool = True,
        moving_average: int = 25,
        patch_len: int = 16,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 1,
        dim_feedforward: int = 128,
        sigma: float = 4.0,
        learn_sigma: bool = True,
        decay: float | None = None,
        learn_decay: bool = False,
        dropout: float = 0.0,
        attention: bool = True,
        normalize: str = "last",
    ):
        super().__init__()
        if lookback < 1 or horizon < 1:
            raise ValueError("lookback and horizon must be >= 1")
        if normalize not in ("none", "last"):
            raise ValueError(f"normalize must be 'none' or 'last'; got {normalize!r}")
        self.register_buffer("level_norm", torch.tensor(float(normalize == "last")))
        self.lookback, self.horizon, self.n_channels = lookback, horizon, n_channels
        self.channel_independent = channel_independent
        self.moving_average = max(1, min(moving_average, lookback) | 1)  # odd
        self.linear_trend = nn.Linear(lookback, horizon)
        self.linear_seasonal = nn.Linear(lookback, horizon)
        for lin in (self.linear_trend, self.linear_seasonal):
            nn.init.constant_(lin.weight, 1.0 / lookback)
            nn.init.zeros_(lin.bias)
        self.use_attention = attention
        if attention:
            self.patch_len = min(patch_len, lookback)
            self.n_patches = math.ceil(lookback / self.patch_len)
            width = 1 if channel_independent else n_channels
            self.patch_embed = nn.Linear(self.patch_len * width, d_model)
            self.position = nn.Parameter(torch.zeros(self.n_patches, d_model))
            att = dict(
                sigma=sigma,
                learn_sigma=learn_sigma,
                decay=decay,
                learn_decay=learn_decay and decay is not None,
            )
            self.blocks = nn.ModuleList(
                EncoderBlock(d_model, num_heads, dim_feedforward, dropout, attention_kwargs=att)
                for _ in range(num_layers)
            )
            self.attn_head = nn.Linear(self.n_patches * d_model, horizon * width)
            nn.init.zeros_(self.attn_head.weight)  # residual bypass: starts as the linear model
            nn.init.zeros_(self.attn_head.bias)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # models saved before ``level_norm`` existed normalised by the last value
        state_dict.setdefault(prefix + "level_norm", torch.tensor(1.0))
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    @torch.no_grad()
    def set_linear(self, weight, bias, normalize: str) -> None:
        """Set the linear branch to the map ``y = u @ weight + bias`` on ``u = x - last``
        (``normalize="last"``, plus ``last`` after) or ``u = x`` (``"none"``).

        ``weight`` is (lookback, horizon) as in :class:`tssdpa.baselines.DLinearForecaster`
        (``weights_[c]``); both branches get it, which is exact whatever the trend filter
        (``W^T (A u) + W^T (u - A u) = W^T u``).
        """
        if normalize not in ("none", "last"):
            raise ValueError(f"normalize must be 'none' or 'last'; got {normalize!r}")
        W = torch.as_tensor(np.asarray(weight), dtype=self.linear_trend.weight.dtype)
        b = torch.as_tensor(np.asarray(bias), dtype=self.linear_trend.bias.dtype)
        if W.shape != (self.lookback, self.horizon) or b.shape != (self.horizon,):
            raise ValueError(
                f"expected weight ({self.lookback}, {self.horizon}) and bias ({self.horizon},), "
                f"got {tuple(W.shape)} and {tuple(b.shape)}"
            )
        self.linear_trend.weight.copy_(W.T)
        self.linear_seasonal.weight.copy_(W.T)
        self.linear_trend.bias.copy_(b)
        self.linear_seasonal.bias.zero_()
        self.level_norm.fill_(float(normalize == "last"))

    def _trend(self, x: Tensor) -> Tensor:  # x (N, L) -> moving average with edge padding
        k = self.moving_average
        front = x[:, :1].expand(-1, (k - 1) // 2)
        back = x[:, -1:].expand(-1, (k - 1) // 2)
        xp = torch.cat([front, x, back], dim=1)
        return xp.unfold(1, k, 1).mean(-1)

    def forward(self, x: Tensor) -> Tensor:
        B, Lb, C = x.shape
        if Lb != self.lookback or C != self.n_channels:
            raise ValueError(
                f"expected (B, {self.lookback}, {self.n_channels}), got {tuple(x.shape)}"
            )
        last = x[:, -1:, :]
        z = x - last
        zc = z.permute(0, 2, 1).reshape(B * C, Lb)  # (B*C, L)
        level = self.level_norm * last  # last (NLinear) or 0 (DLinear)
        uc = (x - level).permute(0, 2, 1).reshape(B * C, Lb)
        trend = self._trend(uc)
        out = self.linear_trend(trend) + self.linear_seasonal(uc - trend)  # (B*C, H)
        out = out.reshape(B, C, self.horizon).permute(0, 2, 1)
        if self.use_attention:
            pad = self.n_patches * self.patch_len - Lb
            if self.channel_independent:
                seq = torch.nn.functional.pad(zc, (pad, 0))  # (B*C, P*pl)
                tokens = seq.reshape(B * C, self.n_patches, self.patch_len)
            else:
                seq = torch.nn.functional.pad(z, (0, 0, pad, 0))  # (B, P*pl, C)
                tokens = seq.reshape(B, self.n_patches, self.patch_len * C)
            h = self.patch_embed(tokens) + self.position
            for blk in self.blocks:
                h = blk(h)
            res = self.attn_head(h.flatten(1))
            if self.channel_independent:
                res = res.reshape(B, C, self.horizon).permute(0, 2, 1)
            else:
                res = res.reshape(B, self.horizon, C)
            out = out + res
        return out + level


# =============================================================================== helpers
#: Default learning-rate multiplier of the ridge-initialised linear branch of
#: :class:`LearnedProjectionForecaster` (0 = frozen), chosen on ETTh1's validation split
#: (M, horizon 96, seed 0; experiments/configs/forecast_etth1.yaml): validation MSE 0.6351
#: frozen, 0.6302 at 0.01, 0.6516 at 0.1, 0.6340 at 1 (0.6607 without the ridge start).
LINEAR_LR_SCALE = 0.01

#: Ridge-initialisation grid: the same search as the harness's ``dlinear`` baseline
#: (``tssdpa.compare.registry``): every pair is tried, the best on validation MSE is kept.
RIDGE_GRID = tuple(
    {"ridge": r, "normalize": n} for r in (1e-4, 1e-2, 1.0, 100.0) for n in ("none", "last")
)


def _linear_predict(W: np.ndarray, b: np.ndarray, X: np.ndarray, normalize: str) -> np.ndarray:
    """DLinearForecaster's prediction on windows: X (N, L, C) -> (N, H, C), float64."""
    X = np.asarray(X, dtype=np.float64)
    last = X[:, -1:, :] if normalize == "last" else 0.0
    return np.einsum("nlc,lh->nhc", X - last, W) + b[None, :, None] + last


def ridge_linear_init(net: ForecastingNet, train_series, val_pairs, grid=None) -> dict:
    """Set ``net``'s linear branch to the closed-form ridge DLinear fitted on ``train_series``.

    For every configuration of ``grid`` (default :data:`RIDGE_GRID`, the harness's DLinear
    search) a :class:`tssdpa.baselines.DLinearForecaster` (shared weights, the net's lookback,
    horizon and moving-average kernel) is fitted on the training series (T, C) only; the one
    with the lowest MSE on the validation windows ``val_pairs = (past (N, L, C), future (N, H,
    C))`` (NaN targets ignored) is copied into the net. With the attention head at zero (as
    built) the net then forecasts exactly like that linear model.

    Returns ``{"ridge", "normalize", "val_mse", "scores"}``.
    """
    from tssdpa.baselines import DLinearForecaster

    a = np.asarray(train_series, dtype=np.float64)
    a = a[:, None] if a.ndim == 1 else a
    Xv, Yv = (np.asarray(t, dtype=np.float64) for t in val_pairs)
    ok = ~np.isnan(Yv)
    if not ok.any():
        raise ValueError("the validation windows have no finite target")
    best, scores = None, []
    for cfg in grid if grid is not None else RIDGE_GRID:
        est = DLinearForecaster(
            lookback=net.lookback,
            horizon=net.horizon,
            kernel_size=net.moving_average,
            individual=False,
            **cfg,
        ).fit(a)
        W, b = est.weights_[0]
        mse = float(np.mean((_linear_predict(W, b, Xv, cfg["normalize"])[ok] - Yv[ok]) ** 2))
        scores.append({**cfg, "val_mse": mse})
        if best is None or mse < best[0]:
            best = (mse, cfg, W, b)
    mse, cfg, W, b = best
    net.set_linear(W, b, cfg["normalize"])
    return {"ridge": cfg["ridge"], "normalize": cfg["normalize"], "val_mse": mse, "scores": scores}


def _windows(a: np.ndarray, length: int, stride: int) -> np.ndarray:
    """(T, C) -> (N, length, C) windows starting at 0, stride, ... (copy)."""
    if a.shape[0] < length:
        raise ValueError(f"series has {a.shape[0]} samples, fewer than the window {length}")
    starts = np.arange(0, a.shape[0] - length + 1, stride)
    return np.stack([a[s : s + length] for s in starts])


def _time_split(T: int, window: int, val_fraction: float, name: str = "x") -> tuple[int, int]:
    """Split T samples in time: training ``[0, a)``, validation ``[b, T)``, with a gap of one
    window (``b - a = window``) so that no training window touches the validation part.

    The validation part is the last ``val_fraction`` of the samples (at least one window);
    windows are cut from each part separately, so they never overlap.
    """
    if not 0.0 < float(val_fraction) < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction!r}")
    n_val = max(window, int(round(T * float(val_fraction))))
    b = T - n_val
    a = b - window
    if a < window:
        raise ValueError(
            f"{name} has {T} samples: too short for a training part, a gap of one "
            f"window ({window}) and a validation part of {n_val} samples"
        )
    return a, b


def _save_torch(path, kind, params, fitted, module, arrays):
    from safetensors.torch import save_file

    path = Path(path)
    cfg = {
        "kind": kind,
        "format": 1,
        "params": _jsonable(params, "params"),
        "fitted": _jsonable(fitted, "fitted"),
    }
    text = json.dumps(cfg, indent=2)  # converted and checked before anything is written
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(text)
    tensors = {f"net.{k}": v.detach().cpu().contiguous() for k, v in module.state_dict().items()}
    tensors.update({k: torch.as_tensor(v, dtype=torch.float64) for k, v in arrays.items()})
    save_file(tensors, str(path / "model.safetensors"))


def _load_torch(path, kind):
    from safetensors.torch import load_file

    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"no saved model at {path} (missing config.json)")
    cfg = json.loads((path / "config.json").read_text())
    if cfg.get("kind") != kind:
        raise ValueError(f"{path} holds a {cfg.get('kind')!r}, not a {kind!r}")
    tensors = load_file(str(path / "model.safetensors"))
    state = {k[4:]: v for k, v in tensors.items() if k.startswith("net.")}
    arrays = {k: v.numpy() for k, v in tensors.items() if not k.startswith("net.")}
    return cfg["params"], cfg["fitted"], state, arrays


# =============================================================================== estimators
class LearnedProjectionFilter(ParamsMixin):
    """Causal learned denoiser with the ProjectionFilter interface (fit / filter / step / save).

    Parameters
    ----------
    window : int
        Attention window of every layer (receptive field ``num_layers * (window-1) + 1``).
    seq_len : int
        Training window length.
    d_model, num_heads, num_layers, dim_feedforward, sigma, decay : network settings
        (sigma and decay are learned per head).
    noise_std : float or None
        Self-supervised training (no target): extra Gaussian noise added to x, the network
        learns to remove it (default: the robust noise estimate of x).
    max_epochs, batch_size, lr, patience : training settings (early stopping on ``val_loss``).
    val_fraction : float
        Fraction of the samples, the last ones in time, held out for validation. The series
        is split first (training part, a gap of ``seq_len`` samples, validation tail) and
        windows are cut from each part, so no training window overlaps a validation one
        (``split_`` records the sample ranges).
    accelerator : str
        Lightning accelerator ("auto", "cpu", "gpu", ...).
    enable_progress_bar : bool
    checkpoint_dir : str or None
        Where the best checkpoint goes (a temporary folder when None); reloaded after fit.
    trainer_kwargs : dict or None
        Extra ``lightning.Trainer`` arguments (override the above).
    seed : int

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import LearnedProjectionFilter
    >>> t = np.linspace(0, 30, 1200)
    >>> clean = np.sin(t); noisy = clean + 0.2 * np.random.default_rng(0).normal(size=t.size)
    >>> f = LearnedProjectionFilter(window=8, seq_len=64, d_model=8, num_layers=1,
    ...     max_epochs=1, enable_progress_bar=False,
    ...     trainer_kwargs=dict(enable_checkpointing=False, accelerator="cpu"))
    >>> f.fit(noisy, target=clean).filter(noisy).shape
    (1200,)
    """

    def __init__(
        self,
        window=16,
        seq_len=128,
        d_model=32,
        num_heads=4,
        num_layers=2,
        dim_feedforward=64,
        sigma=2.0,
        decay=0.9,
        noise_std=None,
        max_epochs=20,
        batch_size=32,
        lr=3e-3,
        patience=3,
        val_fraction=0.2,
        accelerator="auto",
        enable_progress_bar=True,
        checkpoint_dir=None,
        trainer_kwargs=None,
        seed=0,
    ):
        self.window = window
        self.seq_len = seq_len
        self.d_model = d_model
        self.num_heads = num_heads
        self.num_layers = num_layers
        self.dim_feedforward = dim_feedforward
        self.sigma = sigma
        self.decay = decay
        self.noise_std = noise_std
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.patience = patience
        self.val_fraction = val_fraction
        self.accelerator = accelerator
        self.enable_progress_bar = enable_progress_bar
        self.checkpoint_dir = checkpoint_dir
        self.trainer_kwargs = trainer_kwargs
        self.seed = seed

    causal = True

    def _net_kwargs(self):
        return dict(
            d_model=self.d_model,
            num_heads=self.num_heads,
            num_layers=self.num_layers,
            dim_feedforward=self.dim_feedforward,
            window=self.window,
            sigma=self.sigma,
            decay=self.decay,
        )

    def fit(self, x, target=None):
        """Train on windows of (x, target), or of (x + noise, x) when no target. Returns self."""
        x2, _ = as_2d(x)
        if np.isnan(x2).all():
            raise ValueError("x is all NaN")
        C = x2.shape[1]
        self.n_channels_ = C
        self.mean_ = np.nanmean(x2, axis=0)
        sd = np.nanstd(x2, axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        z = (x2 - self.mean_) / self.scale_
        if target is not None:
            t2, _ = as_2d(target, "target")
            if t2.shape != x2.shape:
                raise ValueError(f"target has shape {t2.shape}, x has {x2.shape}")
            inputs, targets = z, (t2 - self.mean_) / self.scale_
        else:
            rng = np.random.default_rng(self.seed)
            ns = (
                self.noise_std / self.scale_
                if self.noise_std is not None
                else np.array([noise_scale(z[:, [c]]) for c in range(C)])
            )
            inputs, targets = z + ns * rng.normal(size=z.shape), z
        n = self.seq_len
        stride = max(1, n // 2)
        # split the series first (train | gap of one window | validation tail), then cut
        # windows from each part: training and validation windows never share a sample
        a, b = _time_split(x2.shape[0], n, self.val_fraction)
        self.split_ = {"train": (0, a), "val": (b, x2.shape[0])}
        train = (_windows(inputs[:a], n, stride), _windows(targets[:a], n, stride))
        val = (_windows(inputs[b:], n, stride), _windows(targets[b:], n, stride))
        from tssdpa.filters.systems import DenoisingSystem, train_system

        torch.manual_seed(self.seed)  # the initial weights must not depend on what ran before
        self.system_ = DenoisingSystem(C, lr=self.lr, **self._net_kwargs())
        self.history_ = train_system(
            self.system_,
            train,
            val,
            max_epochs=self.max_epochs,
            batch_size=self.batch_size,
            patience=self.patience,
            accelerator=self.accelerator,
            enable_progress_bar=self.enable_progress_bar,
            checkpoint_dir=self.checkpoint_dir,
            seed=self.seed,
            trainer_kwargs=self.trainer_kwargs,
        )
        return self

    def _fitted(self):
        if not hasattr(self, "system_"):
            raise ValueError("call fit() first")

    @property
    def history_length(self) -> int:
        """Samples of past input the state keeps (receptive field - 1)."""
        self._fitted()
        return self.system_.net.receptive_field - 1

    def initial_state(self, n_channels=None):
        """Empty state: (receptive_field - 1, C) array of NaN."""
        self._fitted()
        return np.full((self.history_length, self.n_channels_), np.nan)

    @torch.no_grad()
    def _apply(self, z: np.ndarray, hist: np.ndarray, block: int = 2048) -> np.ndarray:
        """Exact chunked evaluation: each block sees its receptive field of earlier input."""
        net = self.system_.net.eval()
        H = hist.shape[0]
        full = np.concatenate([hist, z])
        out = np.empty_like(z)
        for a in range(0, z.shape[0], block):
            b = min(z.shape[0], a + block)
            seg = torch.as_tensor(full[a : H + b], dtype=torch.float32)[None]
            out[a:b] = net(seg)[0, H:].double().numpy()
        return out

    def filter(self, x, zi=None):
        """Causal filtering; with ``zi`` return ``(y, zf)`` (any split equals one pass).

        Leading samples of a state that are NaN count as missing (masked keys).
        """
        self._fitted()
        x2, meta = as_2d(x)
        if x2.shape[1] != self.n_channels_:
            raise ValueError(
                f"x has {x2.shape[1]} channel(s) but the filter was fitted on {self.n_channels_}"
            )
        H = self.history_length
        if zi is None:
            hist_z = np.full((H, self.n_channels_), np.nan)
        else:
            zi = np.asarray(zi, dtype=np.float64)
            if zi.shape != (H, self.n_channels_):
                raise ValueError(f"zi has shape {zi.shape}, expected {(H, self.n_channels_)}")
            hist_z = (zi - self.mean_) / self.scale_
        z = (x2 - self.mean_) / self.scale_
        y = self._apply(z, hist_z) * self.scale_ + self.mean_
        if zi is None:
            return restore(y, meta)
        full = np.concatenate([zi, x2])
        return restore(y, meta), full[full.shape[0] - H :].copy()

    def step(self, sample, state):
        """One sample: returns ``(y_t, new_state)``."""
        s = np.asarray(sample, dtype=np.float64)
        y, new = self.filter(s.reshape(1, -1), zi=state)
        return (y[0, 0] if s.ndim == 0 else y[0]), new

    def save(self, path):
        """Directory with config.json + model.safetensors (nothing pickled)."""
        self._fitted()
        _save_torch(
            path,
            "LearnedProjectionFilter",
            self.get_params(),
            {"n_channels_": self.n_channels_, "history_": self.history_},
            self.system_.net,
            {"mean_": self.mean_, "scale_": self.scale_},
        )

    @classmethod
    def load(cls, path) -> LearnedProjectionFilter:
        params, fitted, state, arrays = _load_torch(path, "LearnedProjectionFilter")
        obj = cls(**params)
        obj.n_channels_, obj.history_ = fitted["n_channels_"], fitted["history_"]
        obj.mean_, obj.scale_ = arrays["mean_"], arrays["scale_"]
        from tssdpa.filters.systems import DenoisingSystem

        obj.system_ = DenoisingSystem(obj.n_channels_, lr=obj.lr, **obj._net_kwargs())
        obj.system_.net.load_state_dict(state)
        obj.system_.eval()
        return obj


class LearnedProjectionForecaster(ParamsMixin):
    """Direct multi-step forecaster (DLinear + projection-attention residual), Lightning-trained.

    ``forecast_path(y, horizon=h)[t, k-1]`` predicts y[t+k] from the ``lookback`` samples ending
    at t (NaN for t < lookback - 1); inputs are standardised with the mean/std of the training
    series (DLinear / ETTh1 protocol: fit on train, scale with train statistics).

    Parameters
    ----------
    lookback, horizon : int
        Input window length and number of steps predicted at once.
    channel_independent : bool
        Share one univariate model across channels (default) or mix channels in each patch.
    moving_average : int
        Kernel of the trend/seasonal split of the linear part.
    patch_len, d_model, num_heads, num_layers, dim_feedforward, sigma, decay, dropout,
    attention : network settings (``attention=False`` gives plain DLinear).
    stride : int
        Step between training windows.
    linear_init : {"ridge", "none"}
        ``"ridge"`` (default): before training, the linear branch is the closed-form ridge
        DLinear (:class:`tssdpa.baselines.DLinearForecaster`) fitted on the training part, its
        penalty and level normalisation chosen on the validation windows from the harness's
        DLinear grid (:data:`RIDGE_GRID`; the choice is in ``linear_init_``). The attention
        head starts at zero, so training starts at that linear forecaster and only models what
        it leaves. ``"none"``: DLinear's averaging initialisation, trained from scratch.
    linear_lr_scale : float
        Learning-rate multiplier of the linear branch (0 freezes it).
    max_epochs, batch_size, lr, patience : training settings (early stopping on ``val_loss``;
        the best epoch is kept, and the starting model if no epoch beats it).
    val_fraction : float
        Without ``y_val``: fraction of the samples, the last ones in time, held out for
        validation. The series is split first (training part, a gap of ``lookback + horizon``
        samples, validation tail) and (past, future) windows are cut from each part, so no
        training window overlaps a validation one (``split_`` records the sample ranges).
    accelerator : str
        Lightning accelerator ("auto", "cpu", "gpu", ...).
    enable_progress_bar : bool
    checkpoint_dir : str or None
        Where the best checkpoint goes (a temporary folder when None); reloaded after fit.
    trainer_kwargs : dict or None
        Extra ``lightning.Trainer`` arguments (override the above).
    seed : int

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import LearnedProjectionForecaster
    >>> y = np.sin(np.arange(800) * 0.1)[:, None] * [1.0, 2.0]
    >>> fc = LearnedProjectionForecaster(lookback=48, horizon=8, d_model=16, max_epochs=1,
    ...     enable_progress_bar=False,
    ...     trainer_kwargs=dict(enable_checkpointing=False, accelerator="cpu"))
    >>> fc.fit(y).forecast_path(y, horizon=8).shape
    (800, 8, 2)
    """

    def __init__(
        self,
        lookback=336,
        horizon=96,
        channel_independent=True,
        moving_average=25,
        patch_len=16,
        d_model=64,
        num_heads=4,
        num_layers=1,
        dim_feedforward=128,
        sigma=4.0,
        decay=None,
        dropout=0.0,
        attention=True,
        stride=1,
        linear_init="ridge",
        linear_lr_scale=LINEAR_LR_SCALE,
        max_epochs=10,
        batch_size=32,
        lr=1e-3,
        patience=3,
        val_fraction=0.2,
        accelerator="auto",
        enable_progress_bar=True,
        checkpoint_dir=None,
        trainer_kwargs=None,
        seed=0,
    ):
        self.lookback = lookback
        self.horizon = horizon
        self.channel_independent = channel_independent
        self.moving_average = moving_average
        self.patch_len = patch_len
        self.d_model = d_model
        self.num_heads = num_heads
        self.num_layers = num_layers
        self.dim_feedforward = dim_feedforward
        self.sigma = sigma
        self.decay = decay
        self.dropout = dropout
        self.attention = attention
        self.stride = stride
        self.linear_init = linear_init
        self.linear_lr_scale = linear_lr_scale
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.patience = patience
        self.val_fraction = val_fraction
        self.accelerator = accelerator
        self.enable_progress_bar = enable_progress_bar
        self.checkpoint_dir = checkpoint_dir
        self.trainer_kwargs = trainer_kwargs
        self.seed = seed

    def _net_kwargs(self):
        return dict(
            channel_independent=self.channel_independent,
            moving_average=self.moving_average,
            patch_len=self.patch_len,
            d_model=self.d_model,
            num_heads=self.num_heads,
            num_layers=self.num_layers,
            dim_feedforward=self.dim_feedforward,
            sigma=self.sigma,
            decay=self.decay,
            learn_decay=self.decay is not None,
            dropout=self.dropout,
            attention=self.attention,
        )

    def _system(self):
        from tssdpa.filters.systems import ForecastingSystem

        return ForecastingSystem(
            self.lookback,
            self.horizon,
            self.n_channels_,
            lr=self.lr,
            linear_init=self.linear_init,
            linear_lr_scale=self.linear_lr_scale,
            **self._net_kwargs(),
        )

    def _pairs(self, z):
        n = self.lookback + self.horizon
        w = _windows(z, n, self.stride)
        return w[:, : self.lookback], w[:, self.lookback :]

    def fit(self, y, y_val=None):
        """Train on (past, future) windows of ``y``; validation on ``y_val`` or the last
        ``val_fraction`` of the windows of ``y``. Returns self."""
        for name in ("lookback", "horizon"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        y2, _ = as_2d(y, "y")
        if np.isnan(y2).all():
            raise ValueError("y is all NaN")
        self.n_channels_ = y2.shape[1]
        self.mean_ = np.nanmean(y2, axis=0)
        sd = np.nanstd(y2, axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        z = np.nan_to_num((y2 - self.mean_) / self.scale_)
        if y_val is not None:
            v2, _ = as_2d(y_val, "y_val")
            self._check_channels(v2)
            train = self._pairs(z)
            val = self._pairs(np.nan_to_num((v2 - self.mean_) / self.scale_))
            self.split_ = {"train": (0, z.shape[0]), "val": None}
        else:
            # split the series in time first (train | gap of one window | validation tail),
            # then cut windows from each part: no sample is in both
            a, b = _time_split(z.shape[0], self.lookback + self.horizon, self.val_fraction, "y")
            self.split_ = {"train": (0, a), "val": (b, z.shape[0])}
            train, val = self._pairs(z[:a]), self._pairs(z[b:])
        train_series = z if y_val is not None else z[: self.split_["train"][1]]
        self.series_ = y2.copy()
        from tssdpa.filters.systems import train_system

        torch.manual_seed(self.seed)  # the initial weights must not depend on what ran before
        self.system_ = self._system()
        self.linear_init_ = None
        if self.linear_init == "ridge":
            info = self.system_.init_linear_ridge(train_series, val)
            self.linear_init_ = {k: info[k] for k in ("ridge", "normalize", "val_mse")}
        if not any(p.requires_grad for p in self.system_.parameters()):
            # attention=False with a frozen linear branch: the closed-form model, no training
            loss = self.linear_init_["val_mse"] if self.linear_init_ else float("nan")
            self.system_.eval()
            self.history_ = {"initial_val_loss": loss, "final_val_loss": loss, "epochs": 0,
                             "kept_initial": True}  # fmt: skip
            return self
        self.history_ = train_system(
            self.system_,
            train,
            val,
            max_epochs=self.max_epochs,
            batch_size=self.batch_size,
            patience=self.patience,
            accelerator=self.accelerator,
            enable_progress_bar=self.enable_progress_bar,
            checkpoint_dir=self.checkpoint_dir,
            seed=self.seed,
            trainer_kwargs=self.trainer_kwargs,
        )
        return self

    def _fitted(self):
        if not hasattr(self, "system_"):
            raise ValueError("call fit() first")

    def _check_channels(self, y2):
        if y2.shape[1] != self.n_channels_:
            raise ValueError(
                f"y has {y2.shape[1]} channel(s) but the forecaster was fitted "
                f"on {self.n_channels_}"
            )

    @torch.no_grad()
    def _path(self, y2, batch=512):
        net = self.system_.net.eval()
        z = np.nan_to_num((y2 - self.mean_) / self.scale_)  # missing -> the training mean
        T, C = z.shape
        out = np.full((T, self.horizon, C), np.nan)
        Lb = self.lookback
        if T < Lb:
            return out
        view = np.lib.stride_tricks.sliding_window_view(z, Lb, axis=0)  # (T-Lb+1, C, Lb)
        for a in range(0, view.shape[0], batch):
            xb = torch.as_tensor(view[a : a + batch].transpose(0, 2, 1).copy(), dtype=torch.float32)
            out[Lb - 1 + a : Lb - 1 + a + xb.shape[0]] = net(xb).double().numpy()
        return out * self.scale_ + self.mean_

    def _check_h(self, h, name="horizon"):
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1:
            raise ValueError(f"{name} must be an int >= 1, got {h!r}")
        if h > self.horizon:
            raise ValueError(f"{name}={h} exceeds the trained horizon {self.horizon}")
        return int(h)

    def forecast_path(self, y, horizon=None):
        """(T, H) or (T, H, C): entry [t, h-1] predicts y[t+h] from y[:t+1]."""
        self._fitted()
        H = self._check_h(self.horizon if horizon is None else horizon)
        y2, meta = as_2d(y, "y")
        self._check_channels(y2)
        out = self._path(y2)[:, :H]
        return out[:, :, 0] if meta.was_1d else out

    def forecast(self, y, horizon=1):
        """Array aligned with y: entry t predicts y[t+horizon] from y[:t+1] (NaN if unknown)."""
        self._fitted()
        h = self._check_h(horizon)
        y2, meta = as_2d(y, "y")
        self._check_channels(y2)
        return restore(self._path(y2)[:, h - 1], meta)

    def predict(self, steps):
        """Forecast ``steps`` (<= horizon) samples past the end of the fitted series."""
        self._fitted()
        steps = self._check_h(steps, "steps")
        p = self._path(self.series_[-self.lookback :])[-1, :steps]
        return p[:, 0] if self.n_channels_ == 1 else p

    def save(self, path):
        """Directory with config.json + model.safetensors (nothing pickled)."""
        self._fitted()
        _save_torch(
            path,
            "LearnedProjectionForecaster",
            self.get_params(),
            {
                "n_channels_": self.n_channels_,
                "history_": self.history_,
                "linear_init_": self.linear_init_,
            },
            self.system_.net,
            {"mean_": self.mean_, "scale_": self.scale_, "series_": self.series_},
        )

    @classmethod
    def load(cls, path) -> LearnedProjectionForecaster:
        params, fitted, state, arrays = _load_torch(path, "LearnedProjectionForecaster")
        obj = cls(**params)
        obj.n_channels_, obj.history_ = fitted["n_channels_"], fitted["history_"]
        obj.mean_, obj.scale_, obj.series_ = arrays["mean_"], arrays["scale_"], arrays["series_"]
        obj.linear_init_ = fitted.get("linear_init_")
        obj.system_ = obj._system()
        obj.system_.net.load_state_dict(state)
        obj.system_.eval()
        return obj
