from memory_core.cli import build_parser


def test_calibrate_is_a_cli_command_that_never_takes_a_store_path():
    args = build_parser().parse_args(["calibrate", "--limit", "2", "--max-false-empty", "0.02", "--json", "out.json"])
    assert args.limit == 2 and args.max_false_empty == 0.02 and args.json == "out.json"
    assert not hasattr(args, "path")
    assert args.fn.__name__ == "cmd_calibrate"
