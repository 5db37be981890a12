"""Data layer: synthetic generators, noise models, loaders, download checks."""

import gzip

import numpy as np
import pytest

from tssdpa import data as D


@pytest.mark.parametrize("name", sorted(D.SIGNALS))
def test_signals_are_seeded_and_finite(name):
    a = D.make_signal(name, 300, seed=1)
    b = D.make_signal(name, 300, seed=1)
    c = D.make_signal(name, 300, seed=2)
    assert a.shape == (300,) and np.all(np.isfinite(a))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert np.std(a) > 0


def test_signal_validation():
    with pytest.raises(ValueError, match="name"):
        D.make_signal("nope")
    with pytest.raises(ValueError, match="n must"):
        D.make_signal("ar2", 1)
    with pytest.raises(ValueError, match="stationary"):
        D.SIGNALS["ar2"](100, 0, phi1=1.5, phi2=0.6)


def test_lorenz_is_on_the_attractor():
    xyz = D.SIGNALS["lorenz"](500, 0, component=None)
    assert xyz.shape == (500, 3)
    assert 10 < xyz[:, 2].mean() < 40 and np.abs(xyz[:, 0]).max() < 25


def test_ar2_has_expected_autocorrelation():
    x = D.make_signal("ar2", 20000, 0)
    r1 = np.corrcoef(x[1:], x[:-1])[0, 1]
    assert abs(r1 - 1.6 / 1.8) < 0.02  # rho1 = phi1 / (1 - phi2)


@pytest.mark.parametrize("snr", [0.0, 10.0, 20.0])
def test_gaussian_noise_hits_the_snr(snr):
    clean = D.make_signal("sinusoids", 20000, 0)
    noisy = D.add_noise(clean, "gaussian", snr, seed=0)
    got = 10 * np.log10(np.var(clean) / np.var(noisy - clean))
    assert abs(got - snr) < 0.1


@pytest.mark.parametrize("kind", D.NOISES)
def test_noise_models(kind):
    clean = np.column_stack([D.make_signal("sinusoids", 2000, 0)] * 2)
    before = clean.copy()
    a = D.add_noise(clean, kind, 10, seed=3)
    b = D.add_noise(clean, kind, 10, seed=3)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(clean, before)
    assert a.shape == clean.shape
    if kind == "dropout":
        assert 0.02 < np.isnan(a).mean() < 0.08
    else:
        assert np.all(np.isfinite(a))
    if kind == "quantize":
        assert len(np.unique(a[:, 0])) <= 40
    if kind == "impulsive":
        r = np.abs(a - clean) / np.std(a - clean)
        assert (r > 5).mean() > 0.005
    with pytest.raises(ValueError, match="kind"):
        D.add_noise(clean, "pink")


def test_sunspots_bundled():
    s = D.load_sunspots()
    assert len(s) == 309 and s.index[0] == 1700


@pytest.mark.data("ett/ETTh1.csv.gz")
def test_load_ett():
    df = D.load_ett("ETTh1")
    assert df.shape == (17420, 7) and list(df.columns) == list(D.ETT_COLUMNS)


@pytest.mark.data("imu/xio-fusion/sensor_data.csv.gz")
def test_a_shortened_or_edited_copy_of_a_dataset_is_refused_by_its_sha256(tmp_path):
    # a valid gzip of the first 2,000 rows, or one value edited, loaded without a word and
    # moved a comparison's figures (11.18 dB -> 5.85 dB)
    good = gzip.decompress(D.find_dataset("imu/xio-fusion/sensor_data.csv.gz").read_bytes())
    lines = good.split(b"\n")
    edited = b"\n".join([lines[0], lines[1].replace(b",", b",1", 1), *lines[2:]])
    for copy in (b"\n".join(lines[:2000]) + b"\n", edited):
        (tmp_path / "imu" / "xio-fusion").mkdir(parents=True, exist_ok=True)
        (tmp_path / "imu" / "xio-fusion" / "sensor_data.csv.gz").write_bytes(_gz(copy))
        with pytest.raises(ValueError, match="sha256 .* is not the published file's"):
            D.load_imu("imu_fusion", tmp_path)


@pytest.mark.data("imu/xio-gait-tracking/short_walk.csv.gz")
def test_load_imu_resamples_uniformly():
    df = D.load_imu("imu_gait")
    dt = np.diff(df.index.to_numpy())
    assert np.allclose(dt, dt[0], rtol=1e-6) and df.shape[1] == 6


@pytest.mark.data("imu/xio-gait-tracking/short_walk.csv.gz")
def test_load_imu_without_resampling_returns_every_row_of_the_file_in_order():
    # PROVENANCE.md: 16,539 rows, 205 repeated timestamps; they were averaged away unsaid
    df = D.load_imu("imu_gait", resample=False)
    assert df.shape == (16539, 6) and (df.index.duplicated()).sum() == 205
    assert df.index.is_monotonic_increasing and df.index.name == "Time (s)"


def test_download_checks_sha256(tmp_path):
    raw = tmp_path / "src.csv"
    raw.write_bytes(b"a,b\n1,2\n")
    sha = D.sha256_file(raw)
    man = {"x/f.csv.gz": (raw.as_uri(), sha, "test")}
    [p] = D.download(cache_dir=tmp_path / "cache", manifest=man, log=lambda m: None)
    with gzip.open(p, "rb") as f:
        assert f.read() == b"a,b\n1,2\n"
    assert D.sha256_file(p, gz=True) == sha
    bad = {"x/g.csv.gz": (raw.as_uri(), "0" * 64, "test")}
    with pytest.raises(ValueError, match="sha256 mismatch"):
        D.download(cache_dir=tmp_path / "cache", manifest=bad, log=lambda m: None)
    assert not (tmp_path / "cache" / "x" / "g.csv.gz").exists()
    with pytest.raises(ValueError, match="names"):
        D.download(["nope"], cache_dir=tmp_path, manifest=man)


def test_a_damaged_cached_download_is_fetched_again(tmp_path):
    raw = tmp_path / "src.csv"
    raw.write_bytes(b"a,b\n1,2\n")
    man = {"x/f.csv.gz": (raw.as_uri(), D.sha256_file(raw), "test")}
    cached = tmp_path / "cache" / "x" / "f.csv.gz"
    for damage in (b"not gzip at all", _gz(b"a,b\n1,2\n")[:12]):  # wrong, cut short
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(damage)  # it was BadGzipFile / EOFError, naming no file
        [p] = D.download(cache_dir=tmp_path / "cache", manifest=man, log=lambda m: None)
        assert gzip.open(p).read() == b"a,b\n1,2\n"


def test_a_data_folder_named_explicitly_must_exist(tmp_path, monkeypatch):
    # a typo in --data-dir or TSSDPA_DATA silently read the data of another folder
    with pytest.raises(FileNotFoundError, match="data_dir .*: no folder"):
        D.find_dataset("ett/ETTh1.csv.gz", tmp_path / "no_such_folder")
    monkeypatch.setenv(D.ENV_VAR, str(tmp_path / "typo"))
    with pytest.raises(FileNotFoundError, match=f"{D.ENV_VAR}: no folder"):
        D.find_dataset("ett/ETTh1.csv.gz")
    assert not D.have_dataset("ett/ETTh1.csv.gz")


def test_a_missing_dataset_is_offered_to_tssdpa_download_only_where_it_fetches_it(
    tmp_path, monkeypatch
):
    # the translation pairs were told "or run `tssdpa download`", which refuses them
    # ("unknown dataset(s) ['spa-eng/spa.txt.gz']")
    import tssdpa.data.paths as paths

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(D.ENV_VAR, raising=False)
    monkeypatch.setattr(paths, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(paths, "_REPO_ROOT", tmp_path / "repo" / "checkout")
    from tssdpa.translation.data import TranslationDataModule

    with pytest.raises(FileNotFoundError) as pairs:
        TranslationDataModule(data_dir=str(tmp_path), cache_dir=str(tmp_path)).source_path()
    assert "tssdpa download` does not fetch it" in str(pairs.value)
    assert f"copy it to {tmp_path / 'cache' / 'spa-eng' / 'spa.txt.gz'}" in str(pairs.value)
    assert "spa-eng/spa.txt.gz" not in D.MANIFEST
    with pytest.raises(FileNotFoundError, match=r"or run `tssdpa download`; see datasets/READ"):
        D.find_dataset("ett/ETTh1.csv.gz", tmp_path)


def test_an_empty_data_dir_is_refused_not_read_as_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "ett").mkdir()
    (tmp_path / "ett" / "ETTh1.csv.gz").write_bytes(b"not the data")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="data_dir .*empty"):
        D.find_dataset("ett/ETTh1.csv.gz", "")


def test_download_names_given_as_one_string_are_refused_naming_names(tmp_path):
    with pytest.raises(ValueError, match="names must be a list.*'ett/ETTh1.csv.gz'"):
        D.download("ett/ETTh1.csv.gz", tmp_path, log=lambda m: None)
    assert not any(tmp_path.iterdir())


def _gz(text: bytes) -> bytes:
    return gzip.compress(text, mtime=0)  # the same bytes in every test worker


def _damaged_inside() -> bytes:
    """A gzip file whose compressed data is overwritten early on: zlib's "invalid bit length
    repeat" (zlib.error), where a damaged check sum is gzip's BadGzipFile."""
    rng = np.random.default_rng(0)
    rows = b"".join(b"2020-01-01,%.3f,%.3f\n" % tuple(v) for v in rng.normal(size=(4000, 2)))
    data = bytearray(_gz(b"date,HUFL,HULL\n" + rows))
    data[40:140] = bytes(rng.integers(0, 256, 100, dtype=np.uint8))
    return bytes(data)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"not gzip", "not a readable copy of the dataset"),  # was BadGzipFile, naming no file
        (_damaged_inside(), "not a readable copy"),  # zlib.error, not an OSError
        (_gz(b"date,HUFL\n2020-01-01,1\n" * 50)[:40], "not a readable copy"),
        (_gz(b"date,X\n2020-01-01,1\n"), "sha256 .* is not the published file's"),
        # a cut copy loaded, then the fixed split ran past its end
        (
            _gz(b"date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT\n" + b"2020-01-01,1,1,1,1,1,1,1\n" * 20),
            "sha256 .* is not the published file's",
        ),  # fmt: skip
    ],
    ids=["not gzip", "damaged inside", "cut short", "other columns", "too few rows"],
)
def test_a_damaged_ett_file_is_refused_naming_it(tmp_path, content, message):
    (tmp_path / "ett").mkdir()
    (tmp_path / "ett" / "ETTh1.csv.gz").write_bytes(content)
    with pytest.raises(ValueError, match=message) as err:
        D.load_ett("ETTh1", tmp_path)
    assert "ETTh1.csv.gz" in str(err.value)
    # the folder read first is where a fresh copy must go
    assert f"tssdpa download --force --cache-dir {tmp_path}`" in str(err.value)


def test_manifest_matches_datasets_folder():
    import json
    from pathlib import Path

    f = Path(__file__).resolve().parents[2] / "datasets" / "MANIFEST.json"
    man = json.loads(f.read_text())
    assert {e["path"]: e["sha256"] for e in man["files"]} == {
        k: v[1] for k, v in D.MANIFEST.items()
    }


def test_the_folders_searched_are_each_named_once(tmp_path, monkeypatch):
    # from the repository root the working directory's parent and the repository's are one
    # folder, which the not-found message listed twice
    from tssdpa.data import paths

    monkeypatch.chdir(paths._REPO_ROOT)
    monkeypatch.delenv("TSSDPA_DATA", raising=False)
    dirs = paths.candidate_dirs()
    assert len(dirs) == len(set(dirs))
