// etcd 3.6 (Debian's 3.4 is below Kubernetes' minimum): the server
// module's etcdmain, as etcd's own main does.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
