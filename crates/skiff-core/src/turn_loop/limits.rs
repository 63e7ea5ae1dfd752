//! The limits checked before each model call: an interrupt, `--max-turns`, the budget.

use super::TurnIo;
use super::state::{End, RunState};
use crate::core::Core;

/// Whether the run may make another model call; counts it when it may. `Err` is how the run
/// ends: interrupted, out of turns (`num_turns` never exceeds `--max-turns`), or past the
/// budget.
pub(super) fn check_limits(core: &Core, io: &TurnIo<'_>, st: &mut RunState) -> Result<(), End> {
    if io.cancel.is_cancelled() {
        return Err(End::Interrupted {
            during_tools: false,
        });
    }
    // Checked before counting: `num_turns` never exceeds `--max-turns`.
    if let Some(max) = core.config.max_turns
        && st.num_turns >= max
    {
        return Err(End::MaxTurns);
    }
    st.num_turns += 1;
    if let Some(budget) = crate::budget::exceeded(core) {
        return Err(End::Budget(budget));
    }
    Ok(())
}
