"""``torch_threads`` sets torch's process-wide thread count for a block and always restores it."""

from __future__ import annotations

import pytest
import torch

from dreammem.torch_threads import torch_threads


def test_the_count_holds_inside_the_block_and_is_restored_after_an_error() -> None:
    saved = torch.get_num_threads()
    wanted = 1 if saved != 1 else 2
    with pytest.raises(KeyError), torch_threads(wanted):
        assert torch.get_num_threads() == wanted
        raise KeyError("boom")
    assert torch.get_num_threads() == saved


def test_none_leaves_the_setting_alone() -> None:
    saved = torch.get_num_threads()
    with torch_threads(None):
        torch.set_num_threads(saved + 1)  # a caller's own change inside the block is theirs
    assert torch.get_num_threads() == saved + 1
    torch.set_num_threads(saved)
