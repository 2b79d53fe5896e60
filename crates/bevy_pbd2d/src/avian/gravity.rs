//! Our [`Gravity`] follows avian's, unless the game sets ours.

use bevy::prelude::*;

use crate::dynamics::Gravity;

/// What [`follow_avian_gravity`] last did.
#[derive(Debug, Default)]
pub(crate) struct Following {
    /// The value it last wrote to ours (`None`: none yet, ours should hold the default).
    written: Option<Vec2>,
    /// The game set ours: it is no longer followed.
    game_owned: bool,
    /// An invalid avian gravity was warned about.
    warned: bool,
}

/// [`Prepare`](crate::PbdStepSystems::Prepare), before the step gate: copies avian's `Gravity`
/// into ours while ours holds what this system last wrote (at first, the default). Once ours
/// holds anything else, the game set it, and it stays the game's. An avian gravity that ours
/// would refuse (not finite, or out of [`Gravity::set`]'s range)
/// is not copied (one warning).
pub(crate) fn follow_avian_gravity(
    avian: Option<Res<avian2d::prelude::Gravity>>,
    mut ours: ResMut<Gravity>,
    mut following: Local<Following>,
) {
    if following.game_owned {
        return;
    }
    if ours.0 != following.written.unwrap_or(Gravity::default().0) {
        following.game_owned = true;
        return;
    }
    let Some(avian) = avian.filter(|a| a.0 != ours.0) else {
        return;
    };
    match ours.set(avian.0) {
        Ok(()) => following.written = Some(avian.0),
        Err(e) if !following.warned => {
            following.warned = true;
            warn!("avian's gravity is not followed: {e}");
        }
        Err(_) => {}
    }
}
