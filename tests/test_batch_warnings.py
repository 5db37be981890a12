"""The library's warnings in a batch run (``tssdpa.batch``, ``tssdpa filter --out-dir``): told
per file, as ``tssdpa filter`` tells them for one file. A tau filter on epoch-millisecond
times returns the columns unchanged; every warning silenced, the run exited 0 without a word."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tssdpa.batch import filter_files, filter_table
from tssdpa.checks import LibraryWarning
from tssdpa.filters import ProjectionFilter

UNCHANGED = "returns x unchanged"


def _log(ms: bool, n=300, seed=0) -> pd.DataFrame:
    """A log whose times are epoch milliseconds (``ms``, read as seconds: 100 s apart, tau 0.3
    s: no sample weighs on another) or seconds 0.1 s apart."""
    a = np.sin(np.arange(n) / 9) + 0.2 * np.random.default_rng(seed).normal(size=n)
    stamps = 1_700_000_000_000 + 100 * np.arange(n) if ms else 0.1 * np.arange(n)
    return pd.DataFrame({"timestamp": stamps, "a": a})


def test_filter_files_tells_each_files_library_warning_in_its_notes(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    _log(ms=True).to_csv(tmp_path / "in" / "ms.csv", index=False)
    _log(ms=False).to_csv(tmp_path / "in" / "s.csv", index=False)
    summary = filter_files(str(tmp_path / "in" / "*.csv"), tmp_path / "out",
                           params={"tau": 0.3}, progress=False)  # fmt: skip
    notes = dict(zip(summary["file"].map(lambda f: Path(f).name), summary["notes"]))
    assert summary["status"].tolist() == ["ok", "ok"]
    told = [n for n in notes["ms.csv"].splitlines() if UNCHANGED in n]
    assert len(told) == 1 and told[0].startswith("time column 'timestamp': their median step")
    assert UNCHANGED not in notes["s.csv"]


def test_a_tables_times_far_apart_are_told_to_name_their_unit_and_a_later_fit_to_divide_them():
    # the advice is made where the warning is (it was rewritten from "divide them by 1e3" by
    # string matching); the table's time column is forgotten once its table is done
    _, info = filter_table(_log(ms=True), ProjectionFilter(window=8, sigma=0.5, tau=0.3))
    (told,) = [n for n in info["notes"] if UNCHANGED in n]
    assert told.endswith("(these look like milliseconds since the epoch: name the unit in the "
                         "column's name, 'timestamp (ms)')")  # fmt: skip
    log = _log(ms=True)
    with pytest.warns(LibraryWarning, match=UNCHANGED) as seen:
        ProjectionFilter(window=8, sigma=0.5, tau=0.3).fit(
            log[["a"]].to_numpy(), timestamps=log["timestamp"].to_numpy()
        )
    assert str(seen[0].message).endswith("milliseconds since the epoch: divide them by 1e3)")


def test_tables_filtered_in_threads_each_get_their_own_warnings_and_no_others():
    tables = [_log(ms=i % 2 == 0, seed=i) for i in range(8)]

    def one(df):
        return filter_table(df, ProjectionFilter(window=8, sigma=0.5, tau=0.3))[1]["notes"]

    with ThreadPoolExecutor(max_workers=4) as pool:
        notes = list(pool.map(one, tables))
    for i, said in enumerate(notes):
        assert sum(UNCHANGED in n for n in said) == (1 if i % 2 == 0 else 0), (i, said)
    # the filters are the caller's again once every table is done
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.warn("after the run", LibraryWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["after the run"]


def test_cli_out_dir_tells_the_tau_warning_under_the_files_name(cli_in_process, tmp_path):
    (tmp_path / "msin").mkdir()
    (tmp_path / "msout").mkdir()
    _log(ms=True).to_csv(tmp_path / "msin" / "ms.csv", index=False)
    r = cli_in_process("filter", "msin/*.csv", "--out-dir", "msout", "--params", '{"tau":0.3}',
                       "--no-progress", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    told = [line for line in r.stderr.splitlines() if UNCHANGED in line]
    assert len(told) == 1 and told[0].startswith("ms.csv: note: time column 'timestamp'")
    assert "Warning" not in r.stderr


def test_a_worker_process_of_two_threads_tells_each_files_own(tmp_path):
    from dask.distributed import Client, LocalCluster

    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    for i in range(4):
        _log(ms=i % 2 == 0, seed=i).to_csv(tmp_path / "in" / f"log{i}.csv", index=False)
    cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                           dashboard_address=":0", silence_logs=50)  # fmt: skip
    with cluster, Client(cluster) as client:
        summary = filter_files(str(tmp_path / "in" / "*.csv"), tmp_path / "out",
                               params={"tau": 0.3}, client=client, progress=False)  # fmt: skip
    assert summary["status"].tolist() == ["ok"] * 4, summary["error"].tolist()
    told = [sum(UNCHANGED in n for n in notes.splitlines()) for notes in summary["notes"]]
    assert told == [1, 0, 1, 0]


def test_a_tables_warning_reaches_its_notes_while_another_thread_silences_every_warning():
    # warnings.catch_warnings swaps the process's filters: a thread entering one (pandas', ours
    # reading a CSV) while other tables were in progress silenced a table's warning
    import threading

    from tssdpa.estimators.input_notes import library_warnings

    steps = [threading.Event() for _ in range(4)]

    def table_in_progress():
        with library_warnings():
            steps[0].set()
            steps[3].wait(60)

    def silencer():
        steps[0].wait(60)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            steps[1].set()
            steps[2].wait(60)

    table, silent = (threading.Thread(target=f) for f in (table_in_progress, silencer))
    table.start()
    silent.start()
    steps[1].wait(60)
    try:
        notes = filter_table(_log(ms=True), ProjectionFilter(window=8, sigma=0.5, tau=0.3))[1]
    finally:  # the silencer leaves first, then the table restores the caller's filters
        steps[2].set()
        silent.join()
        steps[3].set()
        table.join()
    assert sum(UNCHANGED in n for n in notes["notes"]) == 1, notes["notes"]


def test_the_package_warns_its_own_warnings_through_checks_warn():
    # warnings.warn with a LibraryWarning would reach a batch table's notes only through the
    # process's filters, which other threads swap (the test above)
    import ast

    package = Path(__file__).resolve().parents[1] / "tssdpa"
    direct = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = getattr(node, "func", None)
            if not isinstance(node, ast.Call) or not isinstance(called, ast.Attribute):
                continue
            if called.attr == "warn" and getattr(called.value, "id", "") == "warnings":
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                if not names & {"DeprecationWarning", "RuntimeWarning"}:
                    direct.append(str(path.relative_to(package)))
    assert direct == ["checks.py"], direct  # warn itself
