# An independent reference of the fp8lab GPT in plain Python (no numpy/torch), written from
# docs/checkpoint-format.md alone: reads model.safetensors, runs the forward in float64 and prints
# the mean next-token loss, to compare with the model's evaluate() on the same tokens.
# Usage: python3 reference_gpt.py WEIGHTS.safetensors TOKENS.txt
#   TOKENS.txt: line 1 the inputs, line 2 the targets (B * seq_len ids each, space-separated).
# Checked 2026-12-02: fp8lab (fp32 compute) 5.084016753, this script 5.084016805.
import json, struct, math, sys
raw = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', raw[:8])[0]
hdr = json.loads(raw[8:8+n]); data = raw[8+n:]
meta = hdr.pop('__metadata__'); cfg = json.loads(meta['model_config'])
W = {}
for k, v in hdr.items():
    b, e = v['data_offsets']; vals = struct.unpack('<%df' % ((e-b)//4), data[b:e])
    shp = v['shape']
    W[k] = [list(vals[i*shp[1]:(i+1)*shp[1]]) for i in range(shp[0])] if len(shp) == 2 else list(vals)
D, L, H, V, eps = cfg['d_model'], cfg['n_layers'], cfg['n_heads'], cfg['vocab_size'], cfg['norm_eps']
hd = D // H
lines = open(sys.argv[2]).read().split('\n')
inp = list(map(int, lines[0].split())); tgt = list(map(int, lines[1].split()))
T = cfg['seq_len']; B = len(inp) // T
def matvec_t(x, Wm): return [sum(a*b for a, b in zip(x, row)) for row in Wm]  # x @ W.T
def rms(x, g):
    r = 1.0 / math.sqrt(sum(v*v for v in x) / len(x) + eps); return [v*r*gi for v, gi in zip(x, g)]
def gelu(u): return 0.5*u*(1+math.tanh(math.sqrt(2/math.pi)*(u+0.044715*u**3)))
total = 0.0
for b in range(B):
    xs = [[W['wte.weight'][inp[b*T+t]][j] + W['wpe.weight'][t][j] for j in range(D)] for t in range(T)]
    for i in range(L):
        p = 'blocks.%d.' % i
        qkv = [matvec_t(rms(x, W[p+'ln1.weight']), W[p+'attn.qkv.weight']) for x in xs]
        att = [[0.0]*D for _ in range(T)]
        for h in range(H):
            for t in range(T):
                q = qkv[t][h*hd:(h+1)*hd]
                s = [sum(a*c for a, c in zip(q, qkv[j][D+h*hd:D+(h+1)*hd]))/math.sqrt(hd) for j in range(t+1)]
                m = max(s); e = [math.exp(v-m) for v in s]; z = sum(e)
                for c in range(hd): att[t][h*hd+c] = sum(e[j]*qkv[j][2*D+h*hd+c] for j in range(t+1))/z
        xs = [[a+o for a, o in zip(x, matvec_t(at, W[p+'attn.proj.weight']))] for x, at in zip(xs, att)]
        xs = [[a+o for a, o in zip(x, matvec_t([gelu(u) for u in matvec_t(rms(x, W[p+'ln2.weight']), W[p+'mlp.fc.weight'])], W[p+'mlp.proj.weight']))] for x in xs]
    for t in range(T):
        logits = matvec_t(rms(xs[t], W['ln_f.weight']), W['wte.weight'])
        m = max(logits); lse = m + math.log(sum(math.exp(v-m) for v in logits))
        total += lse - logits[tgt[b*T+t]]
print('python reference mean loss %.9f' % (total / len(tgt)))
