// Where the Cartesian impedance law's tick goes, against the CRISP-style law in one process: the whole
// law (rd_compliant_control), each of its stages alone (compliant_stages.c), the CRISP-style law on
// Pinocchio (robot_dynamics_control/bench/crisp_style_impedance.cpp) and, for the stages that a peer
// library does too, the peer's call for the same job: Pinocchio's rnea(q, v, 0) and crba; Eigen's
// fixed-size LLT for A's factor, its triangular solve, product and LLT for S, JacobiSVD for s_min (all six
// values) and SelfAdjointEigenSolver for the damping's 6 x 6 eigen-decomposition.
// Built and run by bench/bench_compliant_stages.py:
//
//   compliant_stages <engine model text> <urdf> [calls] [rounds]
//
// The state moves as bench_update's (every joint on its own sine, +-0.3 rad at 0.3 to 0.9 Hz, a call per
// millisecond), the law as bench_update's rd_compliant_control subject (compliant_subjects.cpp). A
// stage's call runs that stage alone; the stages before it run untimed first, so that it reads what it
// reads inside the law. Each subject is timed call by call with clock_gettime in interleaved rounds.
// Checks first that the CRISP-style law, given the engine's damping, gives the law's torques
// (check_crisp) and that Eigen's damping is the engine's. Prints one line a subject:
// "name<TAB>kind<TAB>p50 [ns]<TAB>p99 [ns]".
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>
#include <pinocchio/parsers/urdf.hpp>

#include "compliant_stages.h"
#include "compliant_subjects.hpp"

namespace
{

using robot_dynamics_control::bench::CompliantLaw;
using Matrix6 = Eigen::Matrix<double, 6, 6>;
using Vector6 = Eigen::Matrix<double, 6, 1>;

double g_sink = 0.0;  // every result read, so that no call is optimised away

/// bench_update's moving state of call k (nq each): joint i at 0.3 sin(w_i t + i), w_i = 2 pi (0.3 + 0.1 i).
void moving_state(int64_t k, std::vector<double> & q, std::vector<double> & qd)
{
  const double t = 1e-3 * static_cast<double>(k);
  for (size_t i = 0; i < q.size(); ++i) {
    const double w = 2.0 * M_PI * (0.3 + 0.1 * static_cast<double>(i));
    q[i] = 0.3 * std::sin(w * t + static_cast<double>(i));
    qd[i] = 0.3 * w * std::cos(w * t + static_cast<double>(i));
  }
}

int64_t now_ns()
{
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Subject
{
  std::string name, kind;
  std::function<void(int64_t)> prepare, call;  // prepare untimed, call timed
  std::vector<double> ns;
  int64_t next = 0;
};

/// The damping's wrench 2 zeta C (C S C)^-1/2 C x by Eigen's SelfAdjointEigenSolver (C = diag(sqrt(k)); S: 6 x 6,
/// its lower triangle read).
Vector6 eigen_damping(const double * k, const double * S, double zeta, const Vector6 & x)
{
  Vector6 c;
  Matrix6 P;
  for (int i = 0; i < 6; ++i) {
    c[i] = std::sqrt(k[i]);
  }
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      P(i, j) = c[i] * (j <= i ? S[i * 6 + j] : S[j * 6 + i]) * c[j];  // S: its lower triangle
    }
  }
  const Eigen::SelfAdjointEigenSolver<Matrix6> eig(P);
  const Vector6 g = (2.0 * zeta) * eig.eigenvalues().cwiseSqrt().cwiseInverse();
  return c.asDiagonal() * (eig.eigenvectors() * (g.asDiagonal() * (eig.eigenvectors().transpose() * (c.asDiagonal() * x))));
}

std::string slurp(const char * path)
{
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char ** argv)
{
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <engine model text> <urdf> [calls] [rounds]\n", argv[0]);
    return 2;
  }
  const int64_t calls = argc > 3 ? std::atoll(argv[3]) : 50000, rounds = argc > 4 ? std::atoll(argv[4]) : 10;
  const std::string text = slurp(argv[1]), urdf = slurp(argv[2]);
  rd_model_size z;
  char err[256];
  rd_model m;
  void * extra = nullptr;
  if (rd_model_text_size(text.c_str(), &z, err, sizeof err) != RD_OK ||
      rd_model_parse(&m, text.c_str(), rd_work_bytes(z.nb, z.nq), &extra, err, sizeof err) != RD_OK) {
    std::fprintf(stderr, "%s\n", err);
    return 1;
  }
  rd_work w;
  rd_work_bind(&w, extra, m.nb, m.nq);
  const auto n = static_cast<size_t>(m.nq);
  std::vector<std::string> joints(m.joint_name, m.joint_name + m.nq);
  std::vector<double> q0(n), qd0(n);
  moving_state(0, q0, qd0);
  auto law = robot_dynamics_control::bench::compliant_law(m, w, q0, urdf, joints);
  CompliantLaw & c = *law;

  // -- the checks: the CRISP-style law is this law given its damping; Eigen's damping is ours --
  std::vector<std::vector<double>> qs(5, std::vector<double>(n)), qds = qs;
  for (size_t s = 0; s < qs.size(); ++s) {
    moving_state(static_cast<int64_t>(137 * s), qs[s], qds[s]);
  }
  const double crisp_diff = robot_dynamics_control::bench::check_crisp(m, w, c, qs, qds);
  rd_stage_scratch scratch{};
  std::vector<double> tau(n);
  double eigen_diff = 0.0;
  for (size_t s = 0; s < qs.size(); ++s) {
    c.q = qs[s], c.qd = qds[s];
    rd_stages_run(0, RD_STAGES, &m, &c.o, &c.in, tau.data(), &w, &scratch);
    const Vector6 theirs = eigen_damping(c.kp.data(), w.tS, c.o.damping_ratio, Eigen::Map<const Vector6>(scratch.ed));
    eigen_diff = std::max(eigen_diff, (theirs - Eigen::Map<const Vector6>(scratch.F)).norm() / theirs.norm());
  }
  if (!(eigen_diff <= 1e-9)) {
    std::fprintf(stderr, "Eigen's damping differs from the engine's by %g (relative)\n", eigen_diff);
    return 1;
  }
  std::fprintf(stderr, "checked: CRISP-style torques within %.1e of max |tau|, Eigen's damping within %.1e\n",
               crisp_diff, eigen_diff);

  // -- the subjects --
  pinocchio::Model pm;
  pinocchio::urdf::buildModelFromXML(urdf, pm);
  pinocchio::Data pd(pm);
  Eigen::VectorXd pq(pm.nq), pv(pm.nv), pa = Eigen::VectorXd::Zero(pm.nv);
  std::vector<Subject> subjects;
  const auto state = [&c](int64_t k) { moving_state(k, c.q, c.qd); };
  subjects.push_back({"rd_compliant_control", "law", state, [&](int64_t) {
    g_sink += rd_compliant_control(&m, &c.o, &c.in, c.tau.data(), nullptr, &w);
  }, {}, 0});
  for (int k = 0; k < RD_STAGES; ++k) {
    subjects.push_back({rd_stage_names[k], "stage", [&, k](int64_t i) {
      moving_state(i, c.q, c.qd);
      rd_stages_run(0, k, &m, &c.o, &c.in, tau.data(), &w, &scratch);
    }, [&, k](int64_t) {
      rd_stages_run(k, k + 1, &m, &c.o, &c.in, tau.data(), &w, &scratch);
      g_sink += tau[0] + scratch.F[0];
    }, {}, 0});
  }
  subjects.push_back({robot_dynamics_control::bench::kCrispName, "peer", state, [&](int64_t) {
    g_sink += c.crisp->update(c.q.data(), c.qd.data());
  }, {}, 0});
  const auto pin_state = [&](int64_t k) {
    moving_state(k, c.q, c.qd);
    pq = Eigen::Map<const Eigen::VectorXd>(c.q.data(), pm.nq);
    pv = Eigen::Map<const Eigen::VectorXd>(c.qd.data(), pm.nv);
  };
  subjects.push_back({"Pinocchio rnea(q, v, 0)", "peer of " + std::string(rd_stage_names[0]), pin_state,
    [&](int64_t) { g_sink += pinocchio::rnea(pm, pd, pq, pv, pa)[0]; }, {}, 0});
  subjects.push_back({"Pinocchio crba", "peer of " + std::string(rd_stage_names[2]), pin_state,
    [&](int64_t) { g_sink += pinocchio::crba(pm, pd, pq)(0, 0); }, {}, 0});
  using Matrix7 = Eigen::Matrix<double, 7, 7>;
  using Matrix67 = Eigen::Matrix<double, 6, 7, Eigen::RowMajor>;
  Matrix7 A;
  Eigen::LLT<Matrix7> A_factor;
  Matrix67 J;
  const auto before = [&](int k) {  // the state of call i and the stages before stage k, then A and J for Eigen
    return [&, k](int64_t i) {
      moving_state(i, c.q, c.qd);
      rd_stages_run(0, k, &m, &c.o, &c.in, tau.data(), &w, &scratch);
      rd_crba(&m, c.q.data(), A.data(), &w);  // symmetric: row- or column-major alike
      J = Eigen::Map<const Matrix67>(w.tJ);
    };
  };
  if (m.nq == 7) {
    subjects.push_back({"Eigen LLT<7 x 7>", "peer of " + std::string(rd_stage_names[3]), before(3),
      [&](int64_t) { A_factor.compute(A); g_sink += A_factor.matrixLLT()(6, 6); }, {}, 0});
    subjects.push_back({"Eigen JacobiSVD<6 x 7>, its six values", "peer of " + std::string(rd_stage_names[4]),
      before(4), [&](int64_t) { g_sink += Eigen::JacobiSVD<Matrix67>(J).singularValues()[5]; }, {}, 0});
    subjects.push_back({"Eigen: L^-1 J^T, its Gram matrix and LLT<6 x 6>", "peer of " + std::string(rd_stage_names[5]),
      [&, prepare = before(5)](int64_t i) { prepare(i); A_factor.compute(A); },
      [&](int64_t) {
        const Eigen::Matrix<double, 7, 6> Y = A_factor.matrixL().solve(J.transpose());
        Matrix6 S = Y.transpose() * Y;
        S.diagonal().array() += scratch.lambda * scratch.lambda;
        g_sink += Eigen::LLT<Matrix6>(S).matrixLLT()(5, 5);
      }, {}, 0});
  }
  subjects.push_back({"Eigen SelfAdjointEigenSolver<6 x 6>, applied", "peer of " + std::string(rd_stage_names[6]),
    [&](int64_t i) {  // every stage, the damping's too: its S and e_dot of call i
      moving_state(i, c.q, c.qd);
      rd_stages_run(0, RD_STAGES, &m, &c.o, &c.in, tau.data(), &w, &scratch);
    },
    [&](int64_t) {
      g_sink += eigen_damping(c.kp.data(), w.tS, c.o.damping_ratio, Eigen::Map<const Vector6>(scratch.ed))[0];
    }, {}, 0});
  subjects.push_back({"clock_gettime (empty timed part)", "timer", [](int64_t) {}, [](int64_t) {}, {}, 0});

  // -- warm-up, then interleaved rounds --
  for (auto & s : subjects) {
    s.ns.reserve(static_cast<size_t>(calls));
    for (; s.next < 1000; ++s.next) {
      s.prepare(s.next);
      s.call(s.next);
    }
  }
  for (int64_t r = 0; r < rounds; ++r) {
    for (auto & s : subjects) {
      for (const int64_t end = 1000 + calls * (r + 1) / rounds; s.next < end; ++s.next) {
        s.prepare(s.next);
        const int64_t t0 = now_ns();
        s.call(s.next);
        s.ns.push_back(static_cast<double>(now_ns() - t0));
      }
    }
  }
  for (auto & s : subjects) {
    std::sort(s.ns.begin(), s.ns.end());
    const auto at = [&s](double p) { return s.ns[static_cast<size_t>(p * static_cast<double>(s.ns.size() - 1))]; };
    std::printf("%s\t%s\t%.1f\t%.1f\n", s.name.c_str(), s.kind.c_str(), at(0.5), at(0.99));
  }
  std::fprintf(stderr, "(%g)\n", g_sink);
  rd_model_free(&m);
  return 0;
}
