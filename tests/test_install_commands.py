"""The README's install commands share one build: the same build
dependencies as pyproject.toml, no build isolation, one build folder; and
.ci/run runs exactly the README's commands."""
import pathlib
import re
import shlex
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _requirement_names(lines):
    return sorted(re.sub(r"\s+", "", line).lower() for line in lines)


def test_build_requirements_file_is_pyprojects_build_system():
    pyproject = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"\[build-system\].*?requires\s*=\s*\[(.*?)\]", pyproject, re.S).group(1)
    declared = re.findall(r'"([^"]+)"', block)
    listed = [line.split("#")[0].strip()
              for line in (ROOT / "requirements-build.txt").read_text().splitlines()]
    assert _requirement_names(declared) == _requirement_names(line for line in listed if line)


def _readme_install_commands():
    readme = (ROOT / "README.md").read_text()
    return [line for line in readme.splitlines()
            if line.startswith("pip install") and "requirements-build.txt" in line]


def test_readme_commands_share_one_build_folder():
    commands = _readme_install_commands()
    extras = set()
    for command in commands:
        steps = [shlex.split(step) for step in command.split("&&")]
        assert steps[0] == ["pip", "install", "-r", "requirements-build.txt"]
        install = steps[1]
        assert install[:2] == ["pip", "install"]
        assert "--no-build-isolation" in install
        assert "--config-settings=build-dir=build/pip" in install
        extras.add(install[-1])
    # the demo (plot), the tests and the documentation
    assert extras == {".[plot]", ".[test]", ".[docs]"}


def test_ci_runs_the_readme_commands():
    # .ci/run refuses to start when the README lacks its commands; run only
    # that check (the script stops before creating its environment when the
    # check fails, so a copy of the check is run here)
    script = (ROOT / ".ci" / "run").read_text()
    setup = script[script.index("INSTALL="):script.index("# The README must")]
    commands = subprocess.run(["bash", "-c", setup + 'printf "%s\\n" "$TEST_COMMAND" '
                               '"$DOCS_COMMAND"'], capture_output=True, text=True,
                              check=True).stdout.splitlines()
    assert len(commands) == 2
    readme_lines = (ROOT / "README.md").read_text().splitlines()
    for command in commands:
        assert command in readme_lines
        assert command in _readme_install_commands()
