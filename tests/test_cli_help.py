"""``python -m bcd ... --help`` describes every command, argument and option,
and shows the defaults of the numeric options."""
import re

import pytest

from bcd.__main__ import main


def _help(capsys, *argv):
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def _commands(capsys):
    text = _help(capsys)
    return re.search(r"\{([\w,-]+)\}", text).group(1).split(",")


def _entries(text):
    """{argument: its help text} of the 'positional arguments' and 'options'
    sections of an argparse help page."""
    entries, name = {}, None
    for line in text.splitlines():
        entry = re.match(r"^  (\S.*?)(?:\s{2,}(\S.*))?$", line)
        if entry:
            name = entry.group(1).split(",")[0].split()[0]
            entries[name] = entry.group(2) or ""
        elif name and re.match(r"^\s{6,}\S", line):
            entries[name] += " " + line.strip()
        else:
            name = None
    return entries


def test_every_command_is_listed_with_a_summary(capsys):
    text = _help(capsys)
    for command in _commands(capsys):
        assert re.search(rf"^    {re.escape(command)}\s+\S", text, re.M) or \
            re.search(rf"^    {re.escape(command)}\n\s+\S", text, re.M), command


def test_every_argument_and_option_has_help(capsys):
    for command in _commands(capsys):
        entries = _entries(_help(capsys, command))
        assert "-h" in entries
        for name, text in entries.items():
            assert text.strip(), f"python -m bcd {command}: {name} has no help"


@pytest.mark.parametrize("command, option, default", [
    ("demo", "--iterations", "500"), ("demo", "--block-size", "5"),
    ("reproduce", "--iterations", "500"), ("reproduce", "--draws", "10"),
    ("gp-demo", "--n-train", "10000"), ("gp-demo", "--n-test", "1000"),
    ("gp-demo", "--cg-max-time", "300.0")])
def test_numeric_options_show_their_defaults(capsys, command, option, default):
    entries = _entries(_help(capsys, command))
    assert f"default: {default}" in entries[option]


def test_demo_and_reproduce_describe_themselves(capsys):
    demo = _help(capsys, "demo")
    assert "Figure 4" in demo.split("options:")[0]
    figure = _entries(_help(capsys, "reproduce"))["FIGURE"]
    for name in ("4", "6", "7", "13", "gpcv", "cholqr"):
        assert name in figure
