"""The console script's folder must not shadow the project's packages (``cli._unshadow_packages``).

python-sat (the ``solver`` extra, installed by ``test``) puts a script named ``models.py`` into the
environment's ``bin/``, the folder Python puts first on ``sys.path`` for the ``commcomp`` console
script. This runs a script from a folder holding such a ``models.py``, as the console script runs.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = "import sys\nfrom cli import main\nsys.exit(main(['list', 'constructions', '--format', 'json']))\n"


def _run(folder):
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run([sys.executable, str(folder / "commcomp_script.py")], env=env, capture_output=True,
                          text=True, timeout=120)


def test_a_models_script_beside_the_console_script_does_not_shadow_the_package(tmp_path):
    (tmp_path / "commcomp_script.py").write_text(SCRIPT)
    (tmp_path / "models.py").write_text("# what python-sat installs into bin/\n")
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "index-lookup" in done.stdout


def test_the_shadow_is_real_without_the_fix(tmp_path):
    """The same folder breaks a plain ``import models.constructions``: the test above can fail."""
    (tmp_path / "commcomp_script.py").write_text("import models.constructions\n")
    (tmp_path / "models.py").write_text("# what python-sat installs into bin/\n")
    done = _run(tmp_path)
    assert done.returncode != 0 and "not a package" in done.stderr
