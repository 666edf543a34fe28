package deps
import (
 _ "github.com/hashicorp/go-memdb"
 _ "github.com/hashicorp/raft"
 _ "github.com/hashicorp/raft-wal"
 _ "github.com/hashicorp/serf/serf"
 _ "github.com/hashicorp/go-msgpack/v2/codec"
 _ "github.com/hashicorp/go-hclog"
 _ "github.com/hashicorp/go-metrics"
 _ "github.com/hashicorp/hcl/v2"
 _ "github.com/zclconf/go-cty/cty"
 _ "github.com/hashicorp/cronexpr"
 _ "go.etcd.io/bbolt"
 _ "github.com/hashicorp/nomad/api"
 _ "github.com/shoenig/test/must"
)

import (
 _ "github.com/hashicorp/go-metrics/prometheus"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/hashicorp/go-cty-funcs/crypto"
 _ "github.com/zclconf/go-cty/cty/function/stdlib"
 _ "github.com/hashicorp/go-uuid"
)
