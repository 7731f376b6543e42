"""The Lab menu: deploy and destroy, the running configuration, sites, terminals and measurements."""
from __future__ import annotations

from PySide6.QtWidgets import QMenu, QMessageBox

from vtopo.gui.actions.context import Context
from vtopo.gui.actions.designer import Designer
from vtopo.gui.actions.spec import SEPARATOR, Action, Menu, Submenu
from vtopo.gui.actions.toolbar import deploy_icon, destroy_icon
from vtopo.gui.console import terminal
from vtopo.gui.panels.deploy import confirm_destroy
from vtopo.kinds.contract import NodeKind


def destroy(designer: Designer) -> None:
    deploy, topology = designer.parts.deploy, designer.parts.editor.topology
    if designer.enabled("lab.destroy") and confirm_destroy(designer.window, deploy.deployed_lab, topology):
        destroy_now(designer)


def destroy_now(designer: Designer) -> None:
    designer.parts.terminals.shutdown()  # a shell left inside would keep its namespace alive
    designer.parts.deploy.destroy()


def fill_running_labs(designer: Designer, menu: QMenu) -> None:
    """Every lab deployed on this host, with its owner and what the agent does to it now."""
    from vtopo.protocol import user_name

    deploy = designer.parts.deploy
    for entry in deploy.running_labs:
        doing = f", {entry.doing}" if entry.doing else ""
        mine = " (this window's lab)" if entry.lab == deploy.deployed_lab else ""
        menu.addAction(f"{entry.lab} — {user_name(entry.owner)}{doing}{mine}").setEnabled(False)
    if not deploy.running_labs:
        menu.addAction("no lab is deployed on this host").setEnabled(False)


def edit_sites(designer: Designer) -> None:
    from vtopo.gui.panels.sites_editor import SitesEditorDialog

    dialog = SitesEditorDialog(designer.window, designer.parts.editor.topology)
    if dialog.exec() == SitesEditorDialog.DialogCode.Accepted:
        designer.parts.editor.set_sites(dialog.sites)


def suggest_sites(designer: Designer) -> None:
    from vtopo.gui.panels.sites_editor import site_choices
    from vtopo.gui.panels.sites_placement import SitesPlacementDialog

    topology = designer.parts.editor.topology
    if len(site_choices(topology)) < 2:
        QMessageBox.information(designer.window, "Suggest placement", "The lab names no other machine yet: add one "
                                "in Lab > Sites… first.")
        return
    dialog = SitesPlacementDialog(designer.window, topology)
    if dialog.exec() == SitesPlacementDialog.DialogCode.Accepted and dialog.placement is not None:
        designer.parts.editor.place_on_sites(dialog.placement.sites)


def _terminal_target(designer: Designer, action_id: str) -> tuple[str, str, NodeKind | None] | None:
    """The lab, name and kind of the selected node, when the action can open a terminal on it."""
    node_id = designer.selected_node()
    if not node_id or not designer.enabled(action_id):
        return None
    editor = designer.parts.editor
    node = editor.topology.nodes[node_id]
    return designer.parts.deploy.deployed_lab or editor.topology.name, node.name, editor.registry.get(node.kind)


def open_terminal(designer: Designer) -> None:
    """A tab in the terminal dock on the selected node."""
    if target := _terminal_target(designer, "lab.terminal"):
        try:
            designer.parts.terminals.open(target[1], terminal.node_argv(*target))
        except OSError as error:
            designer.say(f"the terminal on {target[1]} did not start: {error}")


def open_external_terminal(designer: Designer) -> None:
    if (target := _terminal_target(designer, "lab.external_terminal")) and not terminal.open_terminal(*target):
        designer.say("the terminal emulator did not start")


def iperf_pair(designer: Designer) -> None:
    pair = designer.parts.editor.scene.selected_node_ids()
    if len(pair) == 2 and designer.enabled("lab.iperf_pair"):
        designer.parts.measure.between(pair[0], pair[1])


def deploy_tip(context: Context) -> str:
    return context.unavailable or ("fix the errors in the Problems panel first" if context.errors
                                   else "Deploy the lab on this host")


def destroy_tip(context: Context) -> str:
    return context.unavailable or (f"Tear down everything lab {context.deployed_lab} created" if context.deployed_lab
                                   else "the lab is not deployed")


MENU = Menu("&Lab", (
    Action("lab.deploy", "&Deploy", lambda d: d.deploy_request.press(), keys=("F5",), icon=lambda _: deploy_icon(),
           enabled_when=lambda c: c.idle and not c.errors and not c.waiting, tip=deploy_tip),
    Action("lab.cancel_deploy", "&Cancel deploy", lambda d: d.parts.deploy.cancel(), icon=lambda _: destroy_icon(),
           enabled_when=lambda c: c.deploying, tip="Stop the deploy after its current step and remove what it built"),
    Action("lab.destroy", "D&estroy…", destroy, keys=("Shift+F5",), icon=lambda _: destroy_icon(),
           enabled_when=lambda c: c.idle and bool(c.deployed_lab), tip=destroy_tip),
    Action("lab.status", "Refresh &status", lambda d: d.parts.deploy.refresh_status(),
           enabled_when=lambda c: c.deployer and not c.busy),
    Action("lab.save_running", "Save &running configuration…", lambda d: d.parts.save_running.save_running(),
           enabled_when=lambda c: c.deployer and not c.busy and bool(c.deployed_lab),
           tip="Write what the running lab has become (routers' configurations typed in vtysh, hosts' addresses and "
               "routes) into the lab, after showing what changes"),
    Submenu("lab.running_labs", "&Running labs", fill=fill_running_labs),
    SEPARATOR,
    Action("lab.edit_sites", "S&ites…", edit_sites,
           tip="The machines this lab may place nodes on, each reached over ssh"),
    Action("lab.suggest_sites", "Suggest &placement over sites…", suggest_sites,
           tip="Split the lab over two sites: VM memory balanced, few links between them"),
    SEPARATOR,
    Action("lab.terminal", "Open &terminal", open_terminal, keys=("Ctrl+T",),
           enabled_when=lambda c: not c.terminal_reason,
           tip=lambda c: f"Open a terminal on the node ({c.terminal_reason})" if c.terminal_reason else
           "Open a terminal on the selected node in the Terminal panel"),
    Action("lab.external_terminal", "Open in e&xternal terminal", open_external_terminal,
           enabled_when=lambda c: not c.external_reason,
           tip=lambda c: f"Open a terminal window ({c.external_reason})" if c.external_reason else
           "Open a terminal on the selected node in a window of its own"),
    Action("lab.show_measure", "&Measure…", lambda d: d.parts.measure.show_panel(), keys=("Ctrl+M",)),
    Action("lab.iperf_pair", "iperf between these two", iperf_pair, enabled_when=lambda c: c.pair_measurable,
           tip=lambda c: "Measure from the first selected node to the second" if c.pair_measurable else
           "select two nodes of the deployed lab that can run iperf3"),
))
