"""core.uploads.read_csv_upload and the multipart size limit (red-team findings)."""

import io
import time
from unittest import mock

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from config.upload_handlers import UploadLimitHandler, UploadTooLarge
from core.uploads import UploadError, read_csv_upload

GOOD = b"a,b,c\n1,2,x\n3,4,y\n"


def test_reads_bytes_path_uploaded_file_and_file_like(tmp_path):
    path = tmp_path / "good.csv"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD)  # a BOM, as Excel writes "CSV UTF-8"
    for source in (GOOD, path, str(path), SimpleUploadedFile("g.csv", GOOD), io.BytesIO(GOOD)):
        frame = read_csv_upload(source, name="data")
        assert list(frame.columns) == ["a", "b", "c"] and frame["b"].tolist() == [2, 4]


def test_tab_separator_typed_as_backslash_t():
    frame = read_csv_upload(b"a\tb\n1\t2\n", name="data", sep="\\t")
    assert list(frame.columns) == ["a", "b"]


@pytest.mark.parametrize("sep", ["(x", "||", "", "\n", '"'])
def test_separator_that_pandas_would_read_as_a_regex_is_refused(sep):
    with mock.patch("pandas.read_csv") as read_csv, pytest.raises(UploadError) as caught:
        read_csv_upload(GOOD, name="data", sep=sep)
    assert "data: separator" in str(caught.value) and "--sep" in str(caught.value) and "\\t" in str(caught.value)
    read_csv.assert_not_called()


def test_too_large_is_refused_before_reading_it_all(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(GOOD * 100)
    with mock.patch("builtins.open") as opened, pytest.raises(UploadError, match=r"big: file is larger than the limit"):
        read_csv_upload(path, name="big", max_bytes=100)
    opened.assert_not_called()  # the size came from the file system
    upload = SimpleUploadedFile("big.csv", GOOD * 100)
    with mock.patch.object(upload, "chunks") as chunks, pytest.raises(UploadError, match="larger than the limit"):
        read_csv_upload(upload, name="big", max_bytes=100)
    chunks.assert_not_called()  # UploadedFile.size answered
    stream = io.BytesIO(GOOD * 100)
    with pytest.raises(UploadError, match="larger than the limit"):
        read_csv_upload(stream, name="big", max_bytes=100)
    assert stream.tell() == 101  # read one byte past the limit, not the whole stream
    with pytest.raises(UploadError, match="larger than the limit"):
        read_csv_upload(GOOD * 100, name="big", max_bytes=100)


@pytest.mark.parametrize("content", [b"", b"  \n\n"])
def test_empty_file(content):
    with pytest.raises(UploadError, match="data: the file is empty"):
        read_csv_upload(content, name="data")


def test_not_utf8():
    with pytest.raises(UploadError, match="data: the file is not UTF-8"):
        read_csv_upload("a,b\nJos\u00e9,1\n".encode("latin-1"), name="data")


def test_half_megabyte_header_of_one_repeated_name_is_refused_without_pandas():
    header = ",".join(["name"] * 100_000)  # 0.5 MB: pandas spent 80 s renaming the duplicates
    assert len(header) > 490_000
    content = (header + "\n" + ",".join(["1"] * 100_000) + "\n").encode()
    with mock.patch("pandas.read_csv") as read_csv, pytest.raises(UploadError) as caught:
        read_csv_upload(content, name="data", max_bytes=10**7)
    message = str(caught.value)
    assert message.startswith("data: duplicate column name") and "'name' (100000 times)" in message
    read_csv.assert_not_called()


def test_too_many_columns_and_empty_names():
    with pytest.raises(UploadError, match="data: 4 columns, more than the limit of 3"):
        read_csv_upload(b"a,b,c,d\n1,2,3,4\n", name="data", max_columns=3)
    with pytest.raises(UploadError, match=r"empty column name\(s\) in the header at position\(s\) 2"):
        read_csv_upload(b"a,,c\n1,2,3\n", name="data")


def test_too_many_rows():
    content = b"a\n" + b"1\n" * 11
    with pytest.raises(UploadError, match="data: more than the limit of 10 data rows"):
        read_csv_upload(content, name="data", max_rows=10)
    assert len(read_csv_upload(content, name="data", max_rows=11)) == 11


def test_malformed_rows_are_an_upload_error():
    with pytest.raises(UploadError, match="data: cannot read the CSV"):
        read_csv_upload(b"a,b\n1,2\n1,2,3,4\n", name="data")


def test_parse_time_limit_in_the_main_thread():
    def slow(*args, **kwargs):
        time.sleep(5)  # interruptible, like the Python-level parts of a parse
        return pd.DataFrame({"a": [1]})

    with mock.patch("pandas.read_csv", side_effect=slow), pytest.raises(UploadError) as caught:
        read_csv_upload(GOOD, name="data", max_seconds=0.2)
    assert "data: reading the file took longer than 0.2 s" in str(caught.value)
    assert read_csv_upload(GOOD, name="data", max_seconds=5).shape == (2, 3)  # the timer is disarmed again


def test_upload_handler_counts_streamed_files(settings):
    settings.UPLOAD_MAX_BYTES = 100
    handler = UploadLimitHandler()
    handler.handle_raw_input(None, {}, 0, b"x")  # length unknown: counted as it streams
    assert handler.receive_data_chunk(b"a" * 60, 0) == b"a" * 60
    with pytest.raises(UploadTooLarge, match="at most 100 bytes"):
        handler.receive_data_chunk(b"a" * 60, 60)
    with pytest.raises(UploadTooLarge):
        UploadLimitHandler().handle_raw_input(None, {}, 101, b"x")


def test_situation_testing_command_refuses_a_regex_separator(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"g,y,f\n1,0,1\n0,1,2\n")
    with pytest.raises(CommandError, match="--sep"):
        call_command(
            "situation_testing", str(path), sep="(x", protected="g", protected_value="1", target="y",
            negative="0", out=str(tmp_path / "out"),
        )  # fmt: skip
    assert not (tmp_path / "out").exists()


class OuterTimeout(Exception):
    pass


def _slow_read_csv(*args, **kwargs):
    time.sleep(2)
    return pd.DataFrame({"a": [1]})


def test_parse_time_limit_nests_with_a_job_timer():
    import signal

    def outer(signum, frame):
        raise OuterTimeout

    previous = signal.signal(signal.SIGALRM, outer)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)  # a job's limit, longer than the parse limit
        with mock.patch("pandas.read_csv", side_effect=_slow_read_csv), pytest.raises(UploadError):
            read_csv_upload(GOOD, name="data", max_seconds=0.2)
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 25 < remaining <= 30 and signal.getsignal(signal.SIGALRM) is outer  # re-armed, handler back
        signal.setitimer(signal.ITIMER_REAL, 0.2)  # a job's limit that comes first
        with mock.patch("pandas.read_csv", side_effect=_slow_read_csv), pytest.raises(OuterTimeout):
            read_csv_upload(GOOD, name="data", max_seconds=5)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_typed_value_of_deeply_nested_text_stays_text():
    from research.params import typed_value

    deep = "[" * 100_000
    assert typed_value(deep) == deep and typed_value("1") == 1 and typed_value("Female") == "Female"
