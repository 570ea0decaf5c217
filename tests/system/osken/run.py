"""Run os-ken applications on a TCP port, as osken-manager did before
os-ken 4 dropped its command line: `python run.py PORT APP.py...` (an app:
a module name or a file). The controller of the SDN tests
(tests/system/test_sdn_traffic.py)."""
import sys

from os_ken import cfg
from os_ken.base.app_manager import AppManager
from os_ken.lib import hub


def main() -> None:
    port, apps = sys.argv[1], sys.argv[2:]
    cfg.CONF(args=["--ofp-tcp-listen-port", port], project="os_ken")
    mgr = AppManager.get_instance()
    mgr.load_apps(apps)
    services = mgr.instantiate_apps(**mgr.create_contexts())
    print("listening", flush=True)
    try:
        hub.joinall(services)
    finally:
        mgr.close()


if __name__ == "__main__":
    main()
