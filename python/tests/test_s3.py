"""Archives on object storage (issue 43, item 1), against a real S3 server
the tests start on 127.0.0.1 (moto's server mode, from PyPI): the same
games as the local file, reading the footer, the index and the blocks asked
for, never the whole file."""

from __future__ import annotations

import os

import pytest

import chesspack
from conftest import SAMPLE

s3fs = pytest.importorskip("s3fs", reason="s3fs is not installed (pip install ./python[test])")


class Counting:
    """A file object that counts the bytes read through it."""

    def __init__(self, f):
        self.f, self.read_bytes, self.path = f, 0, f.path

    def read(self, n=-1):
        data = self.f.read(n)
        self.read_bytes += len(data)
        return data

    def seek(self, offset, whence=0):
        return self.f.seek(offset, whence)


def test_an_archive_on_s3_reads_as_the_local_file(s3):
    local = chesspack.Archive(s3["local"])
    remote = chesspack.Archive(s3["url"])
    assert len(remote) == len(local) == 37
    assert [remote[i] for i in (0, 17, 36)] == [local[i] for i in (0, 17, 36)]
    assert remote.tags(5) == local.tags(5)
    assert remote.read_block(2).equals(local.read_block(2))


def test_one_game_from_s3_transfers_its_block_and_the_index(s3):
    fs = s3fs.S3FileSystem()
    f = Counting(fs.open("games/month/big.chpk", "rb", cache_type="none"))
    a = chesspack.Archive(f)
    opened = f.read_bytes
    assert a[700] == chesspack.Archive(s3["big"])[700]
    size = os.path.getsize(s3["big"])
    blocks = chesspack.Archive(s3["big"]).blocks()
    assert len(blocks) == 24
    largest = max(b["length"] for b in blocks)
    # Opening reads the header, the footer and the index (the reader's
    # buffer takes 8 KiB a read); a game, its block.
    print(f"\nopen: {opened} bytes; game 700: {f.read_bytes - opened} more; archive {size} bytes in {len(blocks)} blocks, largest {largest}")
    assert opened <= 3 * 8192, opened
    assert f.read_bytes - opened <= 2 * largest + 2 * 8192, (f.read_bytes, opened, largest)
    assert f.read_bytes < size / 4, (f.read_bytes, size)


def test_storage_options_reach_the_file_system(s3):
    a = chesspack.Archive(s3["url"], storage_options={"endpoint_url": s3["endpoint"]})
    assert len(a) == 37


def test_compress_decompress_and_verify_take_urls(s3, tmp_path):
    import boto3

    url = "s3://games/new/sample.chpk"
    chesspack.compress(SAMPLE, url)
    keys = [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket="games", Prefix="new/")["Contents"]]
    assert keys == ["new/sample.chpk"]  # no temporary key left behind
    assert chesspack.verify(url)["ok"]
    back = tmp_path / "back.pgn"
    assert chesspack.decompress(url, back) == 37
    assert back.read_bytes() == SAMPLE.read_bytes()
    with pytest.raises(FileExistsError):
        chesspack.compress(SAMPLE, url)
    chesspack.decompress(url, "s3://games/new/sample.pgn")
    assert chesspack.Archive(url)[0] == chesspack.Archive(s3["local"])[0]
