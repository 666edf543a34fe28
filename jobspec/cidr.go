package jobspec

import (
	"fmt"
	"math/big"
	"net/netip"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/gocty"
)

// The go-cty-funcs cidr package needs github.com/apparentlymart/go-cidr,
// which is not in go.sum, so cidrhost, cidrnetmask and cidrsubnet are
// implemented here with net/netip and big integers (IPv4 and IPv6).

// cidrHostFunc returns the address of host number hostnum in a prefix; a
// negative number counts back from the end of the range.
var cidrHostFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "prefix", Type: cty.String},
		{Name: "hostnum", Type: cty.Number},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		p, err := parsePrefix(args[0])
		if err != nil {
			return cty.UnknownVal(cty.String), err
		}
		var n int64
		if err := gocty.FromCtyValue(args[1], &n); err != nil {
			return cty.UnknownVal(cty.String), function.NewArgError(1, err)
		}
		hostBits := p.Addr().BitLen() - p.Bits()
		size := new(big.Int).Lsh(big.NewInt(1), uint(hostBits))
		num := big.NewInt(n)
		if n < 0 {
			num.Add(size, num)
		}
		if num.Sign() < 0 || num.Cmp(size) >= 0 {
			return cty.UnknownVal(cty.String), fmt.Errorf("prefix %s has no host number %d", p, n)
		}
		addr := addrFromInt(new(big.Int).Add(addrToInt(p.Addr()), num), p.Addr().Is4())
		return cty.StringVal(addr.String()), nil
	},
})

// cidrNetmaskFunc returns the dotted netmask of an IPv4 prefix.
var cidrNetmaskFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "prefix", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		p, err := parsePrefix(args[0])
		if err != nil {
			return cty.UnknownVal(cty.String), err
		}
		if !p.Addr().Is4() {
			return cty.UnknownVal(cty.String), fmt.Errorf("cidrnetmask only supports IPv4 prefixes, got %s", p)
		}
		ones := new(big.Int).Lsh(big.NewInt(1), 32)
		ones.Sub(ones, big.NewInt(1))
		host := new(big.Int).Lsh(big.NewInt(1), uint(32-p.Bits()))
		host.Sub(host, big.NewInt(1))
		return cty.StringVal(addrFromInt(ones.Xor(ones, host), true).String()), nil
	},
})

// cidrSubnetFunc returns subnet number netnum of a prefix extended by
// newbits bits.
var cidrSubnetFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "prefix", Type: cty.String},
		{Name: "newbits", Type: cty.Number},
		{Name: "netnum", Type: cty.Number},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		p, err := parsePrefix(args[0])
		if err != nil {
			return cty.UnknownVal(cty.String), err
		}
		var newbits, netnum int64
		if err := gocty.FromCtyValue(args[1], &newbits); err != nil {
			return cty.UnknownVal(cty.String), function.NewArgError(1, err)
		}
		if err := gocty.FromCtyValue(args[2], &netnum); err != nil {
			return cty.UnknownVal(cty.String), function.NewArgError(2, err)
		}
		bits := p.Bits() + int(newbits)
		if newbits < 0 || bits > p.Addr().BitLen() {
			return cty.UnknownVal(cty.String), fmt.Errorf("cannot extend prefix %s by %d bits", p, newbits)
		}
		if netnum < 0 || big.NewInt(netnum).BitLen() > int(newbits) {
			return cty.UnknownVal(cty.String), fmt.Errorf("prefix %s extended by %d bits has no subnet number %d", p, newbits, netnum)
		}
		shift := uint(p.Addr().BitLen() - bits)
		base := addrToInt(p.Addr())
		base.Or(base, new(big.Int).Lsh(big.NewInt(netnum), shift))
		sub := netip.PrefixFrom(addrFromInt(base, p.Addr().Is4()), bits)
		return cty.StringVal(sub.String()), nil
	},
})

func parsePrefix(v cty.Value) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(v.AsString())
	if err != nil {
		return netip.Prefix{}, function.NewArgErrorf(0, "invalid CIDR prefix: %s", err)
	}
	return p.Masked(), nil
}

func addrToInt(a netip.Addr) *big.Int {
	return new(big.Int).SetBytes(a.AsSlice())
}

func addrFromInt(n *big.Int, is4 bool) netip.Addr {
	size := 16
	if is4 {
		size = 4
	}
	b := n.FillBytes(make([]byte, size))
	addr, _ := netip.AddrFromSlice(b)
	return addr
}
