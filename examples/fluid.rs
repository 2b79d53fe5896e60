use bevy::prelude::*;
fn main() {
    let _ = App::new().add_plugins((DefaultPlugins, bevy_egui::EguiPlugin::default(), bevy_inspector_egui::bevy_egui::EguiPlugin::default()));
}
