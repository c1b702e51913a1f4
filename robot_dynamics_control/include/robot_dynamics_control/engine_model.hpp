// The engine's packed model for C++: built once, at configuration time, from the text form that
// robot_dynamics' one loader prints (`robot-dynamics engine-model`), with one state's workspace.
#ifndef ROBOT_DYNAMICS_CONTROL__ENGINE_MODEL_HPP_
#define ROBOT_DYNAMICS_CONTROL__ENGINE_MODEL_HPP_

#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <robot_dynamics_engine/engine.h>
}

namespace robot_dynamics_control
{

/// What the loader checks (`robot-dynamics engine-model --strict`): a massless moving link, an
/// inertia that is not physically realizable, a joint without an effort limit, each named, unless
/// the robot's drive-train YAML accepts it.
struct ModelChecks
{
  /// Refuse a model with an issue the description does not accept (else the loader only warns).
  bool strict = false;
  /// The caller gives its own effort limits: a joint without one in the description is no issue.
  bool effort_limits_given = false;
};

class EngineModel
{
public:
  /// The packed model of a URDF (robot_description text) and an optional drive-train YAML path
  /// (empty: none), by running the package's one loader, `robot-dynamics engine-model --urdf FILE
  /// [--drivetrain YAML]` (robot_dynamics' lib/robot_dynamics/robot-dynamics, else `robot-dynamics`
  /// on PATH; the environment variable ROBOT_DYNAMICS_CLI overrides both).
  /// Configuration time only (it starts a process). Throws std::runtime_error with a one-line
  /// reason (the converter's last stderr line), e.g. the issues `checks.strict` refuses.
  static std::shared_ptr<EngineModel> from_description(
    const std::string & urdf, const std::string & drivetrain, const ModelChecks & checks = {});

  /// The model of its text form (rd_model_parse). Throws std::runtime_error with the parser's reason.
  static std::shared_ptr<EngineModel> from_text(const std::string & text);

  ~EngineModel();
  EngineModel(const EngineModel &) = delete;
  EngineModel & operator=(const EngineModel &) = delete;

  /// The packed model (read-only).
  const rd_model & model() const { return model_; }
  /// One state's workspace (rd_work_bind on memory allocated with the model's block).
  rd_work & work() { return work_; }
  /// Number of independent joints.
  int nq() const { return model_.nq; }
  /// Joint names in model order, (nq).
  const std::vector<std::string> & joint_names() const { return joint_names_; }
  /// Effort limits in model order [N m or N], (nq); +inf where the description gives none.
  const std::vector<double> & effort_limits() const { return effort_limits_; }
  /// Position limits [rad or m] (-inf, +inf where none) and velocity limits [rad/s or m/s] (+inf
  /// where none) in model order, (nq) each.
  const std::vector<double> & position_lower() const { return position_lower_; }
  const std::vector<double> & position_upper() const { return position_upper_; }
  const std::vector<double> & velocity_limits() const { return velocity_limits_; }
  /// Model indices of `names`; throws std::runtime_error naming the unknown joint and the valid ones.
  std::vector<int> indices_of(const std::vector<std::string> & names) const;
  /// The robot name of the text form's first line.
  const std::string & robot_name() const { return robot_name_; }

private:
  EngineModel() = default;

  rd_model model_{};
  rd_work work_{};
  std::vector<std::string> joint_names_;
  std::vector<double> effort_limits_, position_lower_, position_upper_, velocity_limits_;
  std::string robot_name_;
};

/// "['a', 'b']": names as a list for error messages.
std::string format_names(const std::vector<std::string> & names);

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__ENGINE_MODEL_HPP_
