import pytest


@pytest.fixture
def toml_file(tmp_path):
    def write(text, name="grid.toml"):
        path = tmp_path / name
        path.write_text(text)
        return path
    return write
