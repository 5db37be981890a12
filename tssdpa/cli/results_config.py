"""The experiment scripts' config callback: LightningCLI's resolved config saved beside
``--results_csv`` (``<its stem>.config.yaml``), checked before training. A class of its own
module, not of :func:`tssdpa.cli.experiment.experiment_main`: ``--trainer.strategy
ddp_spawn`` pickles the Trainer with its callbacks, and a class local to a function was an
``AttributeError: Can't pickle local object`` traceback."""

from __future__ import annotations

from pathlib import Path

from lightning.pytorch.cli import SaveConfigCallback

from tssdpa.cli.paths import check_output_file
from tssdpa.files import same_path

__all__ = ["SaveBesideResults"]


class SaveBesideResults(SaveConfigCallback):
    """Saves the resolved config beside the results CSV, not into the log folder (the
    working directory without a logger, where it replaced a user's ``config.yaml``)."""

    def __init__(self, parser, config, **kwargs):
        super().__init__(parser, config, save_to_log_dir=False, **kwargs)
        csv = Path(str(config["results_csv"]))
        self.path = csv.with_name(f"{csv.stem}.config.yaml")
        # the row is appended after training, the config saved before it: both refused
        # before it (a folder, a file where a folder should be, no permission)
        check_output_file(csv, "--results_csv", make_folders=True)
        if csv.is_file():  # read after training, to add the row by its columns
            import pandas as pd

            try:
                pd.read_csv(csv, nrows=5)
            except (ValueError, UnicodeDecodeError, OSError) as exc:  # a checkpoint, an empty
                # file, a .gz name over text (gzip's BadGzipFile)
                raise ValueError(f"--results_csv {csv} is no CSV table ({type(exc).__name__}"
                                 "); give another file name") from None  # fmt: skip
        for given in config.get("config") or ():
            if same_path(str(given), csv):  # the results row was appended to the YAML
                raise ValueError(
                    f"--results_csv {csv} is the --config file {given}: give another --results_csv"
                )
            if same_path(str(given), self.path):
                raise ValueError(
                    f"--config {given} is where the resolved config of this run goes "
                    "(beside --results_csv): give another --results_csv"
                )
        if csv.suffix.lower() != ".csv":
            # the row is written as CSV text whatever the name: results.xlsx held CSV text,
            # results.csv.gz plain text under a gzip name (which the next run failed to read)
            raise ValueError(f"--results_csv {csv}: the results table is a CSV file; give a "
                             "name ending .csv")  # fmt: skip

    def setup(self, trainer, pl_module, stage) -> None:
        # only fit adds a row: a test run replaced the config of the fit that wrote the
        # rows with its own (another snr_db, a ckpt_path). Skipped here, not in
        # save_config: Lightning marks the config saved after any stage's setup, and the
        # validation of the starting model before fit (forecast.py's ridge start) left
        # a fit with no resolved config at all
        if stage == "fit":
            super().setup(trainer, pl_module, stage)

    def __getstate__(self) -> dict:
        # the parser holds LightningCLI's instantiators, which hold the CLI (a class local to
        # experiment_main: no pickle); a spawned process (ddp_spawn) writes the text instead,
        # as the parser dumps it here
        state = dict(self.__dict__)
        parser = state.pop("parser")
        state["text"] = parser.dump(self.config, skip_none=False)
        return state

    def save_config(self, trainer, pl_module, stage) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if getattr(self, "text", None) is not None:  # a spawned process's
            self.path.write_text(self.text, encoding="utf-8")
            return
        self.parser.save(
            self.config,
            str(self.path),
            skip_none=False,
            overwrite=True,
            multifile=self.multifile,
        )  # as Lightning saves it
